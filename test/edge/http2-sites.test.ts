import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import type { ClientHttp2Session } from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { launchChromium, type TestBrowser } from '../support/chromium.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import { startTestEdge, type TestEdge } from '../support/edge.ts';
import {
  type EdgeSite,
  internalCertificates,
  type RecordingOrigin,
  recordingOrigin,
  startEdgeSite,
} from '../support/edge-site.ts';
import { dataFrame, headersFrame, http2Request, http2Session, RawHttp2 } from '../support/http2-frames.ts';

const run = promisify(execFile);
const SITE = 'shop.platform.test';
const PLATFORM = 'platform.test';

/** What the edge's own answers are: the Error body with a code. */
const errorOf = (text: string) => JSON.parse(text) as { code: string; status: number; message: string };

/**
 * Every HTTPS site over HTTP/2: curl and Chromium negotiate h2 (ALPN) on the platform domain and
 * a project's address, and what holds for HTTP/1.1 holds for h2 — routing by `:authority` (a Host
 * that disagrees refused), the Error body, request ids, the forwarding headers the edge decides,
 * link rewriting, lifecycle headers and 410, the platform's cookies kept from projects, bodies
 * streamed to the origin over HTTP/1.1, and the body deadline.
 */
for (const dialect of testDialects()) {
  describe(`HTTP/2 on every HTTPS site (${dialect})`, () => {
    let site: EdgeSite;
    let origin: RecordingOrigin;
    let edge: TestEdge;
    let session: ClientHttp2Session;
    let leafPem: string;
    let seen: RecordingOrigin['seen'];

    before(async () => {
      origin = await recordingOrigin({
        answer: ({ url, body }, res) => {
          if (url === '/moved') {
            res.writeHead(302, {
              location: `http://127.0.0.1:${origin.port}/pets/3`,
              link: '</pets?page=2>; rel="next"',
              'content-length': 0,
            });
            res.end();
            return;
          }
          const text = JSON.stringify({ url, length: body.length });
          res.writeHead(200, {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(text),
            // Connection-specific headers an HTTP/1.1 origin may send: never on an h2 answer.
            connection: 'keep-alive, x-hop',
            'keep-alive': 'timeout=5',
            'x-hop': 'dropped',
            'set-cookie': ['theirs=1; Path=/', `kennel_session=planted; Domain=${PLATFORM}; Path=/`],
          });
          res.end(text);
        },
      });
      seen = origin.seen;
      const day = 86_400_000;
      const sunsetIn = (days: number) => ({
        get: {
          deprecated: true,
          'x-sunset': new Date(Date.now() + days * day).toISOString().slice(0, 10),
          responses: { 200: { description: 'ok' } },
        },
      });
      const document = JSON.stringify({
        openapi: '3.0.3',
        info: { title: 'Shop', version: '1' },
        paths: { '/old': sunsetIn(30), '/gone': sunsetIn(-30) },
      });
      site = await startEdgeSite(dialect, {
        env: { HEADERS_TIMEOUT: '500ms', RECEIVE_TIMEOUT: '1s' },
        now: true,
        projects: [{ slug: 'shop', originUrl: origin.url, document }],
      });
      const certificates = await internalCertificates(site.p, SITE);
      leafPem = certificates.defaultCertificate.certificatePem;
      edge = await startTestEdge(site.p, certificates);
      session = await http2Session(edge.httpsPort, SITE);
    });

    after(async () => {
      session?.destroy();
      await closeAll(edge, origin, site);
    });

    const get = (path: string, extra: Record<string, string> = {}, authority = SITE) =>
      http2Request(session, { ':method': 'GET', ':path': path, ':authority': authority, ...extra });

    it('curl --http2 negotiates h2 on the platform domain and on a project address; plain HTTP stays 1.1', async () => {
      for (const [host, path] of [
        [PLATFORM, '/api/v1/health'],
        [SITE, '/'],
        [SITE, '/openapi.json'],
        [SITE, '/api/thing'],
      ] as const) {
        const { stdout } = await run('curl', [
          '-sk',
          '--http2',
          '-o',
          '/dev/null',
          '-w',
          '%{http_version}',
          '--resolve',
          `${host}:${edge.httpsPort}:127.0.0.1`,
          `https://${host}:${edge.httpsPort}${path}`,
        ]);
        assert.equal(stdout, '2', `${host}${path}`);
      }
      const { stdout } = await run('curl', [
        '-s',
        '--http2',
        '-o',
        '/dev/null',
        '-w',
        '%{http_version}',
        '-H',
        `host: ${SITE}`,
        `http://127.0.0.1:${edge.httpPort}/openapi.json`,
      ]);
      assert.equal(stdout, '1.1');
    });

    it('routes by :authority, refuses a Host that names another site, and answers unknown hosts with the Error body', async () => {
      const page = await get('/openapi.json');
      assert.equal(page.status, 200);
      assert.equal(JSON.parse(page.text).info.title, 'Shop');
      const unknown = await get('/api/x', {}, 'nobody.platform.test');
      assert.equal(unknown.status, 404);
      assert.equal(errorOf(unknown.text).code, 'host_not_found');
      assert.match(String(unknown.headers['x-request-id']), /^[0-9a-f-]{36}$/);
      const before = seen.length;
      const raw = await RawHttp2.open(edge.httpsPort, SITE);
      raw.write(
        headersFrame(1, [
          [':method', 'GET'],
          [':scheme', 'https'],
          [':authority', SITE],
          [':path', '/api/x'],
          ['host', 'other.platform.test'],
        ]),
      );
      assert.deepEqual(await raw.outcome(1), { status: 400 });
      raw.close();
      assert.equal(seen.length, before);
    });

    it('forwards over HTTP/1.1 with the edge’s forwarding headers and request id, and answers without connection headers', async () => {
      const answer = await get('/api/thing?x=1', {
        'x-forwarded-for': '6.6.6.6',
        'x-request-id': 'forged',
        forwarded: 'for=6.6.6.6',
      });
      assert.equal(answer.status, 200);
      assert.deepEqual(JSON.parse(answer.text), { url: '/thing?x=1', length: 0 });
      const forwarded = seen.at(-1) as (typeof seen)[number];
      assert.equal(forwarded.httpVersion, '1.1');
      assert.equal(forwarded.headers['x-forwarded-for'], '127.0.0.1');
      assert.equal(forwarded.headers['x-forwarded-proto'], 'https');
      assert.equal(forwarded.headers['x-forwarded-host'], SITE);
      assert.equal(forwarded.headers.forwarded, `for=127.0.0.1;host=${SITE};proto=https`);
      assert.equal(forwarded.headers['x-request-id'], answer.headers['x-request-id']);
      assert.notEqual(answer.headers['x-request-id'], 'forged');
      assert.ok(!Object.keys(forwarded.headers).some((name) => name.startsWith(':')));
      // The origin's connection-specific headers (and what its Connection names) are not relayed.
      assert.equal(answer.headers.connection, undefined);
      assert.equal(answer.headers['keep-alive'], undefined);
      assert.equal(answer.headers['x-hop'], undefined);
      // A project's cookie for the platform's own domain is dropped; its own are kept.
      assert.deepEqual(answer.headers['set-cookie'], ['theirs=1; Path=/']);
    });

    it('answers bodiless HEAD and DELETE under /api (served on the stream API) as GET is: the head alone for HEAD', async () => {
      const head = await http2Request(session, {
        ':method': 'HEAD',
        ':path': '/api/thing',
        ':authority': SITE,
      });
      assert.equal(head.status, 200);
      assert.equal(head.text, '');
      assert.equal(head.headers['content-type'], 'application/json');
      assert.equal(
        head.headers['content-length'],
        String(JSON.stringify({ url: '/thing', length: 0 }).length),
      );
      assert.deepEqual(head.headers['set-cookie'], ['theirs=1; Path=/']);
      assert.match(String(head.headers['x-request-id']), /^[0-9a-f-]{36}$/);
      const removed = await http2Request(session, {
        ':method': 'DELETE',
        ':path': '/api/thing/7',
        ':authority': SITE,
      });
      assert.equal(removed.status, 200);
      assert.deepEqual(JSON.parse(removed.text), { url: '/thing/7', length: 0 });
      assert.equal(
        removed.headers['x-request-id'],
        (seen.at(-1) as (typeof seen)[number]).headers['x-request-id'],
      );
    });

    it('rewrites the origin’s links to the site, and keeps the lifecycle: headers before the sunset, 410 after', async () => {
      const moved = await get('/api/moved');
      assert.equal(moved.status, 302);
      assert.equal(moved.headers.location, `https://${SITE}:${edge.httpsPort}/api/pets/3`);
      assert.equal(moved.headers.link, '</api/pets?page=2>; rel="next"');
      const old = await get('/api/old');
      assert.equal(old.status, 200);
      assert.ok(old.headers.deprecation !== undefined && old.headers.sunset !== undefined);
      const before = seen.length;
      const gone = await get('/api/gone');
      assert.equal(gone.status, 410);
      assert.equal(errorOf(gone.text).code, 'operation_sunset');
      assert.equal(seen.length, before);
    });

    it('streams request bodies to the origin: with a Content-Length, and without one (sent chunked)', async () => {
      const big = 'x'.repeat(2 * 1024 * 1024);
      for (const headers of [{ 'content-length': String(big.length) }, {}]) {
        const answer = await http2Request(
          session,
          { ':method': 'POST', ':path': '/api/upload', ':authority': SITE, ...headers },
          big,
        );
        assert.equal(answer.status, 200);
        assert.deepEqual(JSON.parse(answer.text), { url: '/upload', length: big.length });
      }
      assert.equal((seen.at(-1) as (typeof seen)[number]).headers['transfer-encoding'], 'chunked');
    });

    it('answers a body that stalls past RECEIVE_TIMEOUT with 408 receive_timeout and resets the stream', async () => {
      const raw = await RawHttp2.open(edge.httpsPort, SITE);
      const started = performance.now();
      raw.write(
        headersFrame(
          1,
          [
            [':method', 'POST'],
            [':scheme', 'https'],
            [':authority', SITE],
            [':path', '/api/slow-upload'],
            ['content-length', '100'],
          ],
          { endStream: false },
        ),
        dataFrame(1, '{"name":"st', false),
      );
      assert.deepEqual(await raw.outcome(1, 4_000), { status: 408 });
      const ms = performance.now() - started;
      assert.ok(ms >= 900 && ms < 3_000, `answered after ${Math.round(ms)} ms`);
      raw.close();
      assert.ok(!seen.some((s) => s.url === '/slow-upload'));
    });

    it('serves the dashboard, the published reference and the API to Chromium over h2', async () => {
      const spki = createHash('sha256')
        .update(new X509Certificate(leafPem).publicKey.export({ type: 'spki', format: 'der' }))
        .digest('base64');
      const chromium: TestBrowser = await launchChromium({
        mapToLoopback: [PLATFORM, `*.${PLATFORM}`],
        trustSpki: [spki],
      });
      try {
        const context = await chromium.newContext();
        const page = await context.newPage();
        // Node's typings have no DOM: the entries are read as the plain objects they are.
        const protocol = () =>
          page.evaluate(
            () =>
              (
                performance.getEntriesByType('navigation' as never)[0] as unknown as {
                  nextHopProtocol: string;
                }
              ).nextHopProtocol,
          );
        await page.goto(`https://${SITE}:${edge.httpsPort}/`);
        assert.equal(await protocol(), 'h2');
        const api = await page.evaluate(async () => {
          const answer = await fetch('/api/thing');
          const body = await answer.json();
          // The resource's timing entry is written once its body has been read.
          await new Promise((resolve) => setTimeout(resolve, 50));
          const entry = performance.getEntriesByName(answer.url)[0] as unknown as { nextHopProtocol: string };
          return { status: answer.status, body, protocol: entry.nextHopProtocol };
        });
        assert.deepEqual(api, { status: 200, body: { url: '/thing', length: 0 }, protocol: 'h2' });
        await page.goto(`https://${PLATFORM}:${edge.httpsPort}/`);
        await page.waitForURL(/\/sign-in/);
        assert.equal(await protocol(), 'h2');
        await page.getByLabel('Email').waitFor({ timeout: 10_000 });
      } finally {
        await chromium.close();
      }
    });
  });
}
