import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import { type PlainEdge, startPlainEdge } from '../support/edge.ts';
import { type EdgeSite, type LoopbackServer, startEdgeSite, startOrigin } from '../support/edge-site.ts';
import { type Reply, requestAs } from '../support/http.ts';

/**
 * What the edge makes of a request's path and head before the origin sees it (issue 25): the
 * path is matched to the document's operations in linear time whatever the document says, in
 * its normal form (so an encoded spelling meets the same lifecycle), and forwarded in that same
 * form; dot segments are refused; header names with underscores are dropped; links are built
 * from the site's own name and the port the connection came to, never from the raw Host.
 */
interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
}

const operation = (extra: Record<string, unknown> = {}) => ({
  ...extra,
  responses: { '200': { description: 'ok' } },
});
const gone = { deprecated: true, 'x-sunset': '2026-01-01' };

const SHOP_DOCUMENT = {
  openapi: '3.0.3',
  info: { title: 'Shop', version: '1' },
  paths: {
    '/pets': { get: operation(gone) },
    '/store/inventory': { get: operation(gone) },
    '/pets/{petId}': {
      get: operation({
        parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'string' } }],
      }),
    },
    '/redirect': { get: operation() },
  },
};

/** Twelve adjacent parameters: as a backtracking regular expression, seconds for a 36-byte path. */
const ADJACENT = `/${Array.from({ length: 12 }, (_, i) => `{p${i}}`).join('')}x`;
const HOSTILE_DOCUMENT = {
  openapi: '3.0.3',
  info: { title: 'Hostile', version: '1' },
  paths: {
    [ADJACENT]: { get: operation({ deprecated: true, 'x-sunset': '2030-01-01' }) },
  },
};

const timed = async (run: () => Promise<Reply>) => {
  const started = performance.now();
  const reply = await run();
  return { reply, ms: performance.now() - started };
};

for (const dialect of testDialects()) {
  describe(`request paths and heads at the edge (${dialect})`, () => {
    let site: EdgeSite;
    let origin: LoopbackServer;
    let seen: Seen[];
    let edge: PlainEdge;

    const shop = (path: string, init: { headers?: Record<string, string> } = {}) =>
      requestAs(edge.port, 'shop.platform.test', path, { hangMs: 10_000, ...init });

    before(async () => {
      seen = [];
      origin = await startOrigin((req, res) => {
        seen.push({ url: req.url ?? '', headers: req.headers });
        if (req.url === '/base/redirect') {
          res.writeHead(302, { location: `${origin.url}/base/b`, 'content-length': 0 });
          res.end();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ url: req.url }));
      });
      const originUrl = `${origin.url}/base`;
      // The hostile deploy as one made before templates were checked would have stored it.
      const checked = { ...HOSTILE_DOCUMENT, paths: { '/x': { get: operation() } } };
      site = await startEdgeSite(dialect, {
        projects: [
          { slug: 'shop', originUrl, document: JSON.stringify(SHOP_DOCUMENT) },
          { slug: 'hostile', originUrl, document: JSON.stringify(checked) },
        ],
      });
      await site.p.ctx.db
        .updateTable('deploys')
        .set({ document: JSON.stringify(HOSTILE_DOCUMENT) })
        .where('id', '=', site.deploys[1]?.id as number)
        .execute();
      edge = await startPlainEdge(site.p);
    });

    after(() => closeAll(edge, origin, site));

    it('answers a long path on a document with adjacent parameters at once, and other sites meanwhile', async () => {
      // Warm: routing table, documents and origin connections read before the clock starts.
      assert.equal((await requestAs(edge.port, 'hostile.platform.test', '/api/x')).status, 200);
      assert.equal((await shop('/api/pets/1')).status, 200);
      const attack = timed(() =>
        requestAs(edge.port, 'hostile.platform.test', `/api/${'a'.repeat(36)}`, { hangMs: 30_000 }),
      );
      const victim = timed(() => shop('/api/pets/2'));
      const [hostile, other] = await Promise.all([attack, victim]);
      // The template no router can serve is not routed: the request reaches the origin as any other.
      assert.equal(hostile.reply.status, 200);
      assert.equal(hostile.reply.headers.deprecation, undefined);
      assert.equal(other.reply.status, 200);
      assert.ok(hostile.ms < 1000, `the hostile request took ${Math.round(hostile.ms)} ms`);
      assert.ok(other.ms < 200, `a request to another site waited ${Math.round(other.ms)} ms`);
    });

    it('meets the lifecycle whatever the spelling of the path, and forwards the path it matched', async () => {
      seen.length = 0;
      for (const path of ['/api/pets', '/api/%70ets', '/api/%70%65%74%73', '/api/store/%69nventory']) {
        const answer = await shop(path);
        assert.equal(answer.status, 410, path);
        assert.equal(JSON.parse(answer.text).code, 'operation_sunset', path);
      }
      const message = JSON.parse((await shop('/api/%70ets?x=1')).text).message as string;
      assert.match(message, /^GET \/pets was retired/);
      assert.deepEqual([...seen], []);
      const forwarded = await shop('/api/pets/%7e%41%2f%c3%a9%zz?q=%2e%2e');
      assert.equal(forwarded.status, 200);
      assert.deepEqual(
        seen.map((s) => s.url),
        ['/base/pets/~A%2F%C3%A9%25zz?q=%2e%2e'],
      );
    });

    it('refuses dot segments, raw or encoded, before the origin sees them', async () => {
      seen.length = 0;
      for (const path of [
        '/api/../x',
        '/api/..',
        '/api/./pets/1',
        '/api/pets/..',
        '/api/%2e%2e/x',
        '/api/%2E%2E/x',
        '/api/.%2e/x',
        '/api/%2e./x',
        '/api/pets/%2e',
        '/api/pets/1/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
      ]) {
        const answer = await shop(path);
        assert.equal(answer.status, 400, path);
        assert.deepEqual(JSON.parse(answer.text), {
          code: 'bad_request_path',
          message:
            'The request path has a `.` or `..` segment (raw or percent-encoded); the API is served only below /api/. Resolve the path before sending it.',
          status: 400,
        });
      }
      assert.deepEqual([...seen], []);
      // Dots inside a segment are ordinary text.
      assert.equal((await shop('/api/pets/..a')).status, 200);
      assert.equal((await shop('/api/pets/.well-known')).status, 200);
      assert.deepEqual(
        seen.map((s) => s.url),
        ['/base/pets/..a', '/base/pets/.well-known'],
      );
    });

    it('drops request headers whose names have underscores', async () => {
      seen.length = 0;
      const answer = await shop('/api/pets/1', {
        headers: {
          X_Forwarded_For: '6.6.6.6',
          Transfer_Encoding: 'chunked',
          Content_Length: '5',
          'X-Request_Id': 'forged',
          X_Custom: 'dropped',
          'X-Custom': 'kept',
        },
      });
      assert.equal(answer.status, 200);
      const headers = seen[0]?.headers ?? {};
      assert.deepEqual(
        Object.keys(headers).filter((name) => name.includes('_')),
        [],
      );
      assert.equal(headers['x-custom'], 'kept');
      assert.equal(headers['x-forwarded-for'], '127.0.0.1');
    });

    it("builds links from the site's name and the port the connection came to, never from the raw Host", async () => {
      const tricked = await requestAs(edge.port, 'shop.platform.test:@attacker.example', '/api/redirect');
      assert.equal(tricked.status, 404);
      assert.equal(JSON.parse(tricked.text).code, 'host_not_found');
      for (const host of ['SHOP.Platform.Test.:1', 'shop.platform.test', `shop.platform.test:${edge.port}`]) {
        const answer = await requestAs(edge.port, host, '/api/redirect');
        assert.equal(answer.status, 302, host);
        assert.equal(answer.headers.location, `http://shop.platform.test:${edge.port}/api/b`, host);
      }
    });
  });
}
