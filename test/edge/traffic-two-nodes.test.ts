import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { run } from '../../src/cli/main.ts';
import { LatencySketch } from '../../src/lib/latency-sketch.ts';
import { buildPlatformApp } from '../../src/main/platform-app.ts';
import { createToken } from '../../src/platform/accounts/credentials.ts';
import type { PlatformTables } from '../../src/platform/db-schema.ts';
import { type Database, openDatabase } from '../../src/storage/index.ts';
import { tempDir } from '../cli/harness.ts';
import { launchChromium } from '../support/chromium.ts';
import { laidOutText, signIn } from '../support/dashboard-page.ts';
import { testDialects } from '../support/databases.ts';
import { type PlainEdge, startPlainEdge } from '../support/edge.ts';
import { seedSites } from '../support/edge-site.ts';
import { listenOnLoopback, requestAs } from '../support/http.ts';
import { startPlatformContext, type TestPlatform } from '../support/platform.ts';

/** How long the origin takes per path: large next to the edge's own overhead (well under 1 ms). */
const DELAY_MS: Record<string, number> = { '/pets': 20, '/pets/1': 60, '/pets/2': 90, '/boom': 5 };
const STATUS: Record<string, number> = { '/boom': 500, '/pets/0': 404, '/nowhere': 404 };

const ok = (description: string) => ({ responses: { '200': { description } } });
const DOCUMENT = JSON.stringify({
  openapi: '3.0.3',
  info: { title: 'Shop', version: '1.0.0' },
  components: { securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } } },
  security: [{ key: [] }],
  paths: {
    '/pets': { get: ok('pets'), post: { responses: { '201': { description: 'added' } } } },
    '/pets/{petId}': { get: ok('a pet') },
    '/boom': { get: { ...ok('fails'), deprecated: true, 'x-sunset': '2026-12-01T00:00:00Z' } },
  },
});

/** The callers' credentials: none of them may be stored. */
const KEYS = { alpha: 'alpha_9f2c71d04b8e4a6fb1c3d5e7', bravo: 'bravo_4d1e88a0c2f64b17a9e3c6d2' } as const;
type Who = keyof typeof KEYS | 'nobody';

/** The known mix: node, caller, method, path, and the operation it must count as. */
const MIX: readonly [
  node: 0 | 1,
  who: Who,
  method: string,
  path: string,
  operation: string,
  times: number,
][] = [
  [0, 'alpha', 'GET', '/pets', 'GET /pets', 3],
  [0, 'alpha', 'GET', '/pets/1', 'GET /pets/{petId}', 2],
  [0, 'alpha', 'GET', '/boom', 'GET /boom', 1],
  [1, 'alpha', 'GET', '/pets?limit=5', 'GET /pets', 2],
  [1, 'bravo', 'GET', '/pets/2', 'GET /pets/{petId}', 2],
  [1, 'bravo', 'POST', '/pets', 'POST /pets', 1],
  [1, 'bravo', 'GET', '/pets/0', 'GET /pets/{petId}', 1],
  [1, 'nobody', 'GET', '/nowhere', 'unmatched', 2],
  [0, 'nobody', 'GET', '/pets', 'GET /pets', 1],
];

const statusOf = (method: string, path: string) =>
  STATUS[path.split('?')[0] as string] ?? (method === 'POST' ? 201 : 200);

/** What the mix adds up to, by a key of each request. */
function expected(keyOf: (row: (typeof MIX)[number]) => string) {
  const sums = new Map<string, { requests: number; errors: number }>();
  for (const row of MIX) {
    const key = keyOf(row);
    const sum = sums.get(key) ?? { requests: 0, errors: 0 };
    sum.requests += row[5];
    if (statusOf(row[2], row[3]) >= 500) sum.errors += row[5];
    sums.set(key, sum);
  }
  return Object.fromEntries([...sums].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** The lower q-quantile of measured values, as the sketch defines it (rank ⌊q·(n − 1)⌋). */
const quantile = (sorted: readonly number[], q: number) =>
  sorted[Math.floor(q * (sorted.length - 1))] as number;

describe('traffic over two edge nodes on one PostgreSQL: API, CLI, dashboard, request log, nothing secret stored', {
  skip: !testDialects().includes('postgres') && 'TEST_DATABASE excludes postgres',
}, () => {
  let p: TestPlatform;
  let databaseB: Database<PlatformTables>;
  let origin: Server;
  let management: FastifyInstance;
  let managementUrl = '';
  let token = '';
  const edges: PlainEdge[] = [];
  const config = tempDir('kennel-traffic-e2e-');

  before(async () => {
    p = await startPlatformContext('postgres');
    databaseB = openDatabase<PlatformTables>(p.storage.location);
    origin = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0]?.replace(/^\/api(?=\/)/, '') ?? '/';
      setTimeout(() => {
        res.writeHead(statusOf(req.method ?? 'GET', path), { 'content-type': 'application/json' });
        res.end(JSON.stringify({ path }));
      }, DELAY_MS[path] ?? 1);
    });
    const originPort = await listenOnLoopback(origin);
    const shop = {
      slug: 'shop',
      name: 'Shop',
      originUrl: `http://127.0.0.1:${originPort}`,
      document: DOCUMENT,
    };
    const { owner } = await seedSites(p.ctx, [shop]);
    token = (await createToken(p.ctx, owner, 'tests')).token;
    // Two nodes: each its own connection pool to the one database, and its own node id.
    edges.push(await startPlainEdge(p, { nodeId: 'node-a' }));
    edges.push(await startPlainEdge({ ...p, ctx: { ...p.ctx, db: databaseB.db } }, { nodeId: 'node-b' }));
    management = buildPlatformApp(p.ctx);
    managementUrl = await management.listen({ port: 0, host: '127.0.0.1' });

    await Promise.all(
      MIX.flatMap(([node, who, method, path, , times]) =>
        Array.from({ length: times }, async () => {
          const answer = await requestAs(
            (edges[node] as PlainEdge).port,
            'shop.platform.test',
            `/api${path}`,
            {
              method,
              headers: who === 'nobody' ? {} : { 'x-api-key': KEYS[who] },
            },
          );
          assert.equal(answer.status, statusOf(method, path), `${method} ${path}: ${answer.text}`);
        }),
      ),
    );
    // The recording runs when each response closes; then both nodes write what they hold.
    await sleep(100);
    await Promise.all(edges.map((edge) => edge.flush()));
  });

  after(async () => {
    for (const edge of edges) await edge.close();
    await management?.close();
    origin?.close();
    await databaseB?.close();
    await p?.close();
    config.remove();
  });

  const api = async (url: string) => {
    const answer = await management.inject({
      method: 'GET',
      url,
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(answer.statusCode, 200, answer.body);
    return JSON.parse(answer.body);
  };
  const sums = (groups: { key: string; requests: number; errors: number }[]) =>
    Object.fromEntries(
      groups
        .map((g) => [g.key, { requests: g.requests, errors: g.errors }] as const)
        .sort(([a], [b]) => (a < b ? -1 : 1)),
    );

  it('both nodes wrote their own rows, and the API sums them exactly by operation and by status', async () => {
    const nodes = await p.ctx.db
      .selectFrom('traffic_minutes')
      .select('node_id')
      .distinct()
      .orderBy('node_id')
      .execute();
    assert.deepEqual(
      nodes.map((n) => n.node_id),
      ['node-a', 'node-b'],
    );
    const total = MIX.reduce((n, row) => n + row[5], 0);
    const byOperation = await api('/api/v1/projects/shop/traffic?by=operation&since=1h');
    assert.equal(byOperation.totals.requests, total);
    assert.deepEqual(
      sums(byOperation.groups),
      expected((row) => row[4]),
    );
    const boom = byOperation.groups.find((g: { key: string }) => g.key === 'GET /boom');
    assert.deepEqual([boom.deprecated, boom.sunset], [true, '2026-12-01T00:00:00.000Z']);
    const byStatus = await api('/api/v1/projects/shop/traffic?by=status&since=1h');
    assert.deepEqual(
      sums(byStatus.groups),
      expected((row) => String(statusOf(row[2], row[3]))),
    );
  });

  it('by caller: each key under its label, never its secret, and the unkeyed caller by its /24', async () => {
    const byCaller = await api('/api/v1/projects/shop/traffic?by=caller&since=1h');
    const labels = byCaller.groups.map((g: { caller: string; callerKind: string; requests: number }) => [
      g.caller,
      g.callerKind,
      g.requests,
    ]);
    const expect = expected((row) => row[1]);
    for (const who of ['alpha', 'bravo'] as const) {
      const row = labels.find(
        ([label]: [string]) =>
          label.startsWith('key:') && KEYS[who].startsWith(label.slice(4).replace(/…$/, '')),
      );
      assert.ok(row, `${who} has a group: ${JSON.stringify(labels)}`);
      assert.ok(
        row[0].replace(/…$/, '').length - 4 <= 6,
        `the label shows at most 6 characters of the key: ${row[0]}`,
      );
      assert.deepEqual([row[1], row[2]], ['key', expect[who]?.requests]);
    }
    assert.ok(
      labels.some(
        ([label, kind, n]: [string, string, number]) =>
          label === '127.0.0.0/24' && kind === 'address' && n === expect.nobody?.requests,
      ),
      JSON.stringify(labels),
    );
    assert.equal(labels.length, 3);
    const reach = await api('/api/v1/projects/shop/traffic/deprecations');
    assert.deepEqual(
      reach.operations.map((o: { operation: string; callers: { requests: number }[] }) => [
        o.operation,
        o.callers.map((c) => c.requests),
      ]),
      [['GET /boom', [1]]],
    );
  });

  it("percentiles agree with the latencies the edge measured, within the sketch's stated error", async () => {
    const byOperation = await api('/api/v1/projects/shop/traffic?since=1h');
    const measured = await p.ctx.db.selectFrom('request_logs').select(['operation', 'latency_ms']).execute();
    assert.equal(
      measured.length,
      MIX.reduce((n, row) => n + row[5], 0),
      'every request is in the log',
    );
    for (const group of byOperation.groups as { key: string; p50: number; p95: number; p99: number }[]) {
      const sorted = measured
        .filter((m) => m.operation === group.key)
        .map((m) => Number(m.latency_ms))
        .sort((a, b) => a - b);
      for (const [q, value] of [
        [0.5, group.p50],
        [0.95, group.p95],
        [0.99, group.p99],
      ] as const) {
        const truth = quantile(sorted, q);
        // The log keeps latencies to the microsecond: that rounding on top of the sketch's error.
        const tolerance = truth * LatencySketch.RELATIVE_ACCURACY + 0.001;
        assert.ok(
          Math.abs(value - truth) <= tolerance,
          `${group.key} p${q * 100}: ${value} vs measured ${truth}`,
        );
      }
      // And the edge's measure holds the origin's delay (the edge adds its own, never less).
      const delay = group.key === 'GET /pets' ? DELAY_MS['/pets'] : undefined;
      if (delay !== undefined) assert.ok((sorted[0] as number) >= delay, `${sorted[0]} < ${delay}`);
    }
  });

  it('the CLI reports the same counts, and the request log holds every request from both nodes', async () => {
    const kennel = async (...argv: string[]) => {
      let stdout = '';
      let stderr = '';
      const code = await run(argv, {
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: (text: string) => (stderr += text) },
        stdin: Readable.from([]) as unknown as NodeJS.ReadableStream,
        env: { KENNEL_URL: managementUrl, KENNEL_TOKEN: token, KENNEL_CONFIG_DIR: config.path },
      });
      assert.equal(code, 0, `${stdout}\n${stderr}`);
      return stdout;
    };
    for (const [by, keyOf] of [
      ['operation', (row: (typeof MIX)[number]) => row[4]],
      ['status', (row: (typeof MIX)[number]) => String(statusOf(row[2], row[3]))],
    ] as const) {
      const traffic = JSON.parse(await kennel('traffic', 'shop', '--since', '1h', '--by', by, '--json'));
      assert.deepEqual(sums(traffic.groups), expected(keyOf), by);
    }
    const table = await kennel('traffic', 'shop', '--since', '1h');
    assert.match(table, /^GET \/boom +1 +1 +100\.0% .* deprecated, sunset 2026-12-01$/m);
    const logs = (await kennel('logs', 'shop', '--json', '--limit', '100'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { path: string; operation: string; caller: string });
    assert.equal(
      logs.length,
      MIX.reduce((n, row) => n + row[5], 0),
    );
    assert.ok(
      logs.some((l) => l.path === '/api/pets?limit=' && l.operation === 'GET /pets'),
      'query values dropped',
    );
  });

  it('the dashboard’s Traffic tab shows the same counts per operation and per caller', async () => {
    const chromium = await launchChromium();
    try {
      const page = await (await chromium.newContext({ locale: 'en-US', timezoneId: 'UTC' })).newPage();
      await signIn(page, managementUrl, 'owner@x.test', 'owner password 1');
      await page.goto(`${managementUrl}/projects/shop/traffic?range=1h`);
      const cellOf = (row: string, operation: string, field: string) =>
        laidOutText(
          page.locator(
            `#${row}-title ~ * tr[data-${row.slice(0, -1)}="${operation}"] [data-field="${field}"]`,
          ),
        );
      await page.locator('#operations-title ~ * tr[data-operation="GET /pets"]').waitFor({ timeout: 30_000 });
      const shown: Record<string, { requests: number; errors: number }> = {};
      for (const operation of Object.keys(expected((row) => row[4])))
        shown[operation] = {
          requests: Number(await cellOf('operations', operation, 'calls')),
          errors: Number(await cellOf('operations', operation, 'errors')),
        };
      assert.deepEqual(
        shown,
        expected((row) => row[4]),
      );
      assert.equal(await page.locator('#operations-title ~ * tbody tr').count(), Object.keys(shown).length);
      const callers = await page
        .locator('#callers-title ~ * tbody tr')
        .evaluateAll((rows) =>
          rows.map((row) => [
            row.getAttribute('data-caller'),
            row.querySelector('[data-field="calls"]')?.textContent?.trim(),
          ]),
        );
      const text = await page.locator('body').textContent();
      for (const key of Object.values(KEYS))
        assert.ok(!text?.includes(key.slice(0, 8)), 'no key on the page');
      assert.equal(callers.length, 3);
      assert.deepEqual(
        callers.map(([, calls]) => Number(calls)).sort((a, b) => b - a),
        [8, 4, 3],
      );
    } finally {
      await chromium.close();
    }
  });

  it('streams the log live through the edge: a request served by node A arrives on a stream from node B', async () => {
    const events: string[] = [];
    let headers: Record<string, unknown> = {};
    const stream = request({
      host: '127.0.0.1',
      port: (edges[1] as PlainEdge).port,
      path: '/api/v1/projects/shop/logs/stream',
      headers: { host: 'platform.test', authorization: `Bearer ${token}` },
    });
    const opened = new Promise<void>((resolve, reject) => {
      stream.on('response', (res) => {
        headers = res.headers;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => events.push(chunk));
        resolve();
      });
      stream.on('error', reject);
    });
    stream.end();
    await opened;
    try {
      assert.equal(headers['content-type'], 'text/event-stream; charset=utf-8');
      const answer = await requestAs((edges[0] as PlainEdge).port, 'shop.platform.test', '/api/pets/1', {
        headers: { 'x-api-key': KEYS.alpha },
      });
      assert.equal(answer.status, 200);
      // The edge names each request (its own id, answered in X-Request-Id).
      const requestId = String(answer.headers['x-request-id']);
      await sleep(100);
      await (edges[0] as PlainEdge).flush();
      const deadline = Date.now() + 5_000;
      while (!events.join('').includes(requestId) && Date.now() < deadline) await sleep(50);
      const data = events
        .join('')
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => JSON.parse(line.slice(6)) as { requestId: string; operation: string; status: number });
      assert.deepEqual(
        data.map((d) => [d.requestId, d.operation, d.status]),
        [[requestId, 'GET /pets/{petId}', 200]],
      );
    } finally {
      stream.destroy();
    }
  });

  it('no column of any table holds a key, nor any of it past the label', async () => {
    const schema =
      p.storage.location.kind === 'postgres' ? (p.storage.location.schema ?? 'public') : 'public';
    const columns = await sql<{ table_name: string; column_name: string }>`
      SELECT table_name, column_name FROM information_schema.columns
      WHERE table_schema = ${schema} AND data_type IN ('text', 'character varying')`.execute(p.ctx.db);
    assert.ok(columns.rows.some((c) => c.table_name === 'traffic_callers'));
    for (const key of Object.values(KEYS)) {
      // The whole key, and its part past the six characters a label may show.
      for (const secret of [key, key.slice(6, 18)]) {
        for (const { table_name, column_name } of columns.rows) {
          const found = await sql<{ n: string }>`
            SELECT count(*) AS n FROM ${sql.table(table_name)}
            WHERE strpos(${sql.ref(column_name)}, ${secret}) > 0`.execute(p.ctx.db);
          assert.equal(Number(found.rows[0]?.n), 0, `${table_name}.${column_name} holds ${secret}`);
        }
      }
    }
  });
});
