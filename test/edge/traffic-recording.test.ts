import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { LatencySketch } from '../../src/lib/latency-sketch.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import { type PlainEdge, startPlainEdge } from '../support/edge.ts';
import { type EdgeSite, type LoopbackServer, startEdgeSite, startOrigin } from '../support/edge-site.ts';
import type { TestPlatform } from '../support/platform.ts';

/**
 * Traffic through a real edge (issue 27): a known mix of requests over several operations,
 * statuses and callers, flushed, then read from the four tables — exact counts and bytes, the
 * latency sketches' quantiles within their accuracy of the origin's known delays, callers by
 * keyed hash and short label, and no credential anywhere in what was stored.
 */
const ok = { responses: { '200': { description: 'ok' } } };
const DOCUMENT = {
  openapi: '3.0.3',
  info: { title: 'Shop', version: '1' },
  components: {
    securitySchemes: {
      key: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
      token: { type: 'http', scheme: 'bearer' },
      login: { type: 'http', scheme: 'basic' },
    },
  },
  paths: {
    '/pets': { get: ok, post: ok },
    '/pets/{petId}': { get: { ...ok, deprecated: true, 'x-sunset': '2026-01-01T00:00:00Z' } },
  },
};
const API_KEY = 'sk_live_abcdef1234567890';
const BEARER = 'tok_secret_9876543210zyxw';
const BASIC_PASSWORD = 'pw-very-secret-42';
const BASIC = Buffer.from(`alice-the-caller:${BASIC_PASSWORD}`).toString('base64');
/** The origin's delay for GET /pets, so the recorded latencies have a known floor. */
const DELAY_MS = 40;

/** One request on its own connection; answers the status and every byte the edge sent. */
function send(
  port: number,
  path: string,
  {
    method = 'GET',
    headers = {},
    body = '',
  }: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const head = [
      `${method} ${path} HTTP/1.1`,
      'Host: shop.platform.test',
      'Connection: close',
      ...Object.entries(headers).map(([n, v]) => `${n}: ${v}`),
      ...(body ? [`Content-Length: ${Buffer.byteLength(body)}`] : []),
    ];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const data = Buffer.concat(chunks);
      resolve({ status: Number(data.toString('latin1').split(' ')[1]), bytes: data.length });
    });
    socket.write(`${head.join('\r\n')}\r\n\r\n${body}`);
  });
}

for (const dialect of testDialects()) {
  describe(`traffic recorded by the edge (${dialect})`, () => {
    let site: EdgeSite;
    let p: TestPlatform;
    let origin: LoopbackServer;
    let edge: PlainEdge;
    let projectId: number;

    before(async () => {
      origin = await startOrigin((req, res) => {
        const url = new URL(req.url ?? '/', 'http://origin');
        const status = Number(url.searchParams.get('status') ?? (req.method === 'POST' ? 201 : 200));
        const answer = () => {
          const text = JSON.stringify({ path: url.pathname });
          res.writeHead(url.pathname.endsWith('/nope') ? 404 : status, {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(text),
          });
          res.end(text);
        };
        req.resume();
        req.on('end', () =>
          req.method === 'GET' && url.pathname.endsWith('/pets') ? setTimeout(answer, DELAY_MS) : answer(),
        );
      });
      site = await startEdgeSite(dialect, {
        projects: [{ slug: 'shop', name: 'Shop', originUrl: origin.url, document: JSON.stringify(DOCUMENT) }],
      });
      p = site.p;
      projectId = site.projects[0]?.id as number;
      edge = await startPlainEdge(p);
    });

    after(() => closeAll(edge, origin, site));

    it('counts each operation, status and caller exactly, with bytes and latency, and stores no credential', async () => {
      const sent: { status: number; bytes: number }[] = [];
      const go = async (path: string, init?: Parameters<typeof send>[2]) => {
        const reply = await send(edge.port, path, init);
        sent.push(reply);
        return reply;
      };
      for (let i = 0; i < 3; i++) {
        assert.equal((await go('/api/pets?limit=5', { headers: { 'X-Api-Key': API_KEY } })).status, 200);
      }
      assert.equal((await go('/api/pets?status=503', { headers: { 'X-Api-Key': API_KEY } })).status, 503);
      assert.equal((await go('/api/pets', { headers: { Authorization: `Basic ${BASIC}` } })).status, 200);
      // Past its sunset: the edge answers 410 itself, still attributed to the operation.
      for (let i = 0; i < 2; i++) {
        assert.equal(
          (await go('/api/pets/7', { headers: { Authorization: `Bearer ${BEARER}` } })).status,
          410,
        );
      }
      assert.equal((await go('/api/pets', { method: 'POST', body: '{"name":"Rex"}' })).status, 201);
      assert.equal((await go('/api/nope?token=abc')).status, 404);
      await edge.flush();

      const minutes = await p.ctx.db
        .selectFrom('traffic_minutes')
        .selectAll()
        .where('project_id', '=', projectId)
        .orderBy('operation')
        .orderBy('status')
        .execute();
      const counts = minutes.map((r) => [
        r.node_id,
        r.operation,
        Number(r.status),
        Number(r.requests),
        Number(r.errors),
      ]);
      assert.deepEqual(counts, [
        ['edge-1', 'GET /pets', 200, 4, 0],
        ['edge-1', 'GET /pets', 503, 1, 1],
        ['edge-1', 'GET /pets/{petId}', 410, 2, 0],
        ['edge-1', 'POST /pets', 201, 1, 0],
        ['edge-1', 'unmatched', 404, 1, 0],
      ]);
      assert.ok(minutes.every((r) => r.minute === '2026-11-22T12:00:00.000Z'));
      const total = (key: 'bytes_in' | 'bytes_out') => minutes.reduce((sum, r) => sum + Number(r[key]), 0);
      assert.equal(total('bytes_in'), Buffer.byteLength('{"name":"Rex"}'));
      assert.equal(
        total('bytes_out'),
        sent.reduce((sum, r) => sum + r.bytes, 0),
      );
      // The origin held GET /pets for DELAY_MS: every quantile sits just above it.
      const pets = LatencySketch.fromJSON(minutes[0]?.latency as string);
      assert.equal(pets.count, 4);
      for (const q of [0, 0.5, 0.99]) {
        const ms = pets.quantile(q) as number;
        assert.ok(
          ms >= DELAY_MS * (1 - LatencySketch.RELATIVE_ACCURACY) && ms < DELAY_MS + 500,
          `q${q}: ${ms}`,
        );
      }
      const gone = LatencySketch.fromJSON(minutes[2]?.latency as string);
      assert.ok((gone.quantile(0.5) as number) < DELAY_MS, 'the edge answered 410 without the origin');

      const callers = await p.ctx.db
        .selectFrom('traffic_callers')
        .selectAll()
        .where('project_id', '=', projectId)
        .orderBy('caller_label')
        .orderBy('operation')
        .execute();
      assert.deepEqual(
        callers.map((r) => [
          r.caller_label,
          r.caller_kind,
          r.operation,
          r.day,
          Number(r.requests),
          Number(r.errors),
        ]),
        [
          ['127.0.0.0/24', 'address', 'POST /pets', '2026-11-22', 1, 0],
          ['127.0.0.0/24', 'address', 'unmatched', '2026-11-22', 1, 0],
          ['basic:alice…', 'key', 'GET /pets', '2026-11-22', 1, 0],
          ['bearer:tok_se…', 'key', 'GET /pets/{petId}', '2026-11-22', 2, 0],
          ['key:sk_liv…', 'key', 'GET /pets', '2026-11-22', 4, 1],
        ],
      );
      assert.ok(callers.every((r) => /^[0-9a-f]{32}$/.test(r.caller)));
      assert.ok(callers.every((r) => r.last_seen_at === '2026-11-22T12:00:00.000Z'));

      const logs = await p.ctx.db
        .selectFrom('request_logs')
        .selectAll()
        .where('project_id', '=', projectId)
        .orderBy('id')
        .execute();
      assert.equal(logs.length, 9);
      assert.deepEqual(
        logs.map((l) => [l.method, l.path, l.operation, Number(l.status), l.caller_label]),
        [
          ['GET', '/api/pets?limit=', 'GET /pets', 200, 'key:sk_liv…'],
          ['GET', '/api/pets?limit=', 'GET /pets', 200, 'key:sk_liv…'],
          ['GET', '/api/pets?limit=', 'GET /pets', 200, 'key:sk_liv…'],
          ['GET', '/api/pets?status=', 'GET /pets', 503, 'key:sk_liv…'],
          ['GET', '/api/pets', 'GET /pets', 200, 'basic:alice…'],
          ['GET', '/api/pets/7', 'GET /pets/{petId}', 410, 'bearer:tok_se…'],
          ['GET', '/api/pets/7', 'GET /pets/{petId}', 410, 'bearer:tok_se…'],
          ['POST', '/api/pets', 'POST /pets', 201, '127.0.0.0/24'],
          ['GET', '/api/nope?token=', 'unmatched', 404, '127.0.0.0/24'],
        ],
      );
      assert.deepEqual(
        logs.map((l) => Number(l.bytes_out)),
        sent.map((r) => r.bytes),
      );
      assert.ok(logs.every((l) => /^[0-9a-f-]{36}$/.test(l.request_id) && Number(l.latency_ms) > 0));

      // Nothing secret: no text column of any traffic table holds a credential or its parts.
      const secrets = [
        API_KEY,
        BEARER,
        BASIC,
        BASIC_PASSWORD,
        'abc',
        API_KEY.slice(0, 7),
        BEARER.slice(0, 7),
      ];
      for (const table of ['traffic_minutes', 'traffic_hours', 'traffic_callers', 'request_logs'] as const) {
        const rows = (await p.ctx.db.selectFrom(table).selectAll().execute()) as Record<string, unknown>[];
        for (const row of rows) {
          for (const [column, value] of Object.entries(row)) {
            if (typeof value !== 'string') continue;
            for (const secret of secrets) {
              assert.ok(!value.includes(secret), `${table}.${column} holds ${secret}: ${value}`);
            }
          }
        }
      }
    });

    it('adds to the rows on the next flush, and one credential hashes alike', async () => {
      const before = await p.ctx.db
        .selectFrom('traffic_callers')
        .select(['caller', 'requests'])
        .where('caller_label', '=', 'key:sk_liv…')
        .executeTakeFirstOrThrow();
      assert.equal((await send(edge.port, '/api/pets', { headers: { 'X-Api-Key': API_KEY } })).status, 200);
      await edge.flush();
      const afterRow = await p.ctx.db
        .selectFrom('traffic_callers')
        .select(['caller', 'requests'])
        .where('caller_label', '=', 'key:sk_liv…')
        .executeTakeFirstOrThrow();
      assert.equal(afterRow.caller, before.caller);
      assert.equal(Number(afterRow.requests), Number(before.requests) + 1);
      const pets = await p.ctx.db
        .selectFrom('traffic_minutes')
        .selectAll()
        .where('operation', '=', 'GET /pets')
        .where('status', '=', 200)
        .executeTakeFirstOrThrow();
      assert.equal(Number(pets.requests), 5);
      assert.equal(LatencySketch.fromJSON(pets.latency).count, 5);
    });
  });
}

for (const dialect of testDialects().filter((d) => d === 'postgres')) {
  describe(`traffic on two edge nodes (${dialect})`, () => {
    let site: EdgeSite;
    let p: TestPlatform;
    let origin: LoopbackServer;
    let nodes: PlainEdge[];
    let projectId: number;

    before(async () => {
      origin = await startOrigin((_req, res) => {
        res.writeHead(200, { 'content-length': 2 });
        res.end('{}');
      });
      site = await startEdgeSite(dialect, {
        projects: [{ slug: 'shop', name: 'Shop', originUrl: origin.url, document: JSON.stringify(DOCUMENT) }],
      });
      p = site.p;
      projectId = site.projects[0]?.id as number;
      nodes = [await startPlainEdge(p, { nodeId: 'node-a' }), await startPlainEdge(p, { nodeId: 'node-b' })];
    });

    after(() => closeAll(...(nodes ?? []), origin, site));

    it('each node writes its own rows; a caller hashes alike on both; the sums are exact', async () => {
      const [a, b] = nodes as [PlainEdge, PlainEdge];
      for (let i = 0; i < 3; i++) await send(a.port, '/api/pets', { headers: { 'X-Api-Key': API_KEY } });
      for (let i = 0; i < 2; i++) await send(b.port, '/api/pets', { headers: { 'X-Api-Key': API_KEY } });
      await Promise.all([a.flush(), b.flush()]);
      // Flushing again, concurrently, after more requests: each node overwrites only its own minute.
      await send(b.port, '/api/pets', { headers: { 'X-Api-Key': API_KEY } });
      await Promise.all([a.flush(), b.flush()]);
      const rows = (table: 'traffic_minutes' | 'traffic_callers') =>
        p.ctx.db
          .selectFrom(table)
          .selectAll()
          .where('project_id', '=', projectId)
          .orderBy('node_id')
          .execute();
      const callers = await rows('traffic_callers');
      const logs = await p.ctx.db
        .selectFrom('request_logs')
        .select(({ fn }) => ['node_id', fn.countAll<number>().as('requests')])
        .where('project_id', '=', projectId)
        .groupBy('node_id')
        .orderBy('node_id')
        .execute();
      // Requests by node: counted in the minutes, by caller, and in the request log.
      for (const [table, counted] of [
        ['traffic_minutes', await rows('traffic_minutes')],
        ['traffic_callers', callers],
        ['request_logs', logs],
      ] as const) {
        assert.deepEqual(
          counted.map((r) => [r.node_id, Number(r.requests)]),
          [
            ['node-a', 3],
            ['node-b', 3],
          ],
          table,
        );
      }
      assert.equal(callers[0]?.caller, callers[1]?.caller);
    });
  });
}
