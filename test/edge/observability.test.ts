import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { EdgeMetrics, NodeHealth, observeRequests } from '../../src/edge/index.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import { type HttpEdge, startHttpEdge } from '../support/edge.ts';
import { type EdgeSite, type LoopbackServer, startEdgeSite, startOrigin } from '../support/edge-site.ts';
import { requestAs } from '../support/http.ts';

interface LogLine {
  level: string;
  msg: string;
  [field: string]: unknown;
}

/** The value of one sample in the Prometheus text, or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

for (const dialect of testDialects()) {
  describe(`the edge's operations hooks: health, access log, request id, metrics (${dialect})`, () => {
    let site: EdgeSite;
    let edge: HttpEdge;
    let origin: LoopbackServer;
    let edgePort: number;
    let registry: Registry;
    let health: NodeHealth;
    let databaseUp = true;
    const logs: LogLine[] = [];
    const seenByOrigin: IncomingHttpHeaders[] = [];

    const call = (
      host: string,
      path: string,
      init: { method?: string; headers?: Record<string, string>; body?: string } = {},
    ) => requestAs(edgePort, host, path, init);
    const logged = (reqId: string) => logs.filter((l) => l.reqId === reqId);

    before(async () => {
      origin = await startOrigin((req, res) => {
        seenByOrigin.push(req.headers);
        const delay = req.url?.includes('slow') ? 1000 : 0;
        setTimeout(() => {
          const body = JSON.stringify({ url: req.url });
          res.writeHead(200, {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          });
          res.end(body);
        }, delay);
      });
      site = await startEdgeSite(dialect, {
        projects: [
          { slug: 'echo', originUrl: origin.url },
          { slug: 'down', originUrl: 'http://127.0.0.1:9' },
        ],
      });
      registry = new Registry();
      health = new NodeHealth({
        pingDatabase: async () => {
          if (!databaseUp) throw new Error('connection refused');
        },
        timeoutMs: 500,
      });
      const capture =
        (level: string) =>
        (fields: object, msg: string): void => {
          logs.push({ level, msg, ...JSON.parse(JSON.stringify(fields)) });
        };
      const observed = observeRequests({
        health,
        metrics: new EdgeMetrics(registry),
        logger: { info: capture('info'), warn: capture('warn'), error: capture('error') },
        accessLog: true,
      });
      edge = await startHttpEdge(site.p.ctx, {
        hooks: observed.hooks,
        connectTimeoutMs: 1000,
        responseTimeoutMs: 300,
        onProxyError: observed.onProxyError,
      });
      edgePort = edge.port;
    });

    after(() => closeAll(edge, origin, site));

    it('answers /healthz and /readyz for any host, before routing, with no-store', async () => {
      for (const host of ['echo.platform.test', 'platform.test', 'nowhere.example', '10.0.0.7:8080']) {
        const live = await call(host, '/healthz');
        assert.equal(live.status, 200);
        assert.deepEqual(JSON.parse(live.text), { status: 'live' });
        assert.equal(live.headers['cache-control'], 'no-store');
        const ready = await call(host, '/readyz?verbose=1');
        assert.equal(ready.status, 200);
        assert.deepEqual(JSON.parse(ready.text), { status: 'ready', checks: { database: 'ok' } });
      }
      const head = await call('nowhere.example', '/readyz', { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(head.text, '');
      const post = await call('nowhere.example', '/healthz', { method: 'POST' });
      assert.equal(post.status, 405);
      assert.equal(post.headers.allow, 'GET, HEAD');
      // Probes are not requests of any project: no access log lines.
      assert.equal(
        logs.filter((l) => l.path === '/healthz' || l.path === '/readyz').length,
        0,
        JSON.stringify(logs),
      );
    });

    it('turns not ready (503) while the database fails, and ready again when it answers', async () => {
      databaseUp = false;
      try {
        const ready = await call('echo.platform.test', '/readyz');
        assert.equal(ready.status, 503);
        assert.deepEqual(JSON.parse(ready.text), {
          status: 'unready',
          checks: { database: 'failing: connection refused' },
        });
        assert.equal((await call('echo.platform.test', '/healthz')).status, 200, 'still live');
      } finally {
        databaseUp = true;
      }
      assert.equal((await call('echo.platform.test', '/readyz')).status, 200);
    });

    it('sends the request id to the origin and back, and logs one access line without secrets', async () => {
      const answer = await call('echo.platform.test', '/api/things?token=query-secret', {
        headers: { cookie: 'session=cookie-secret', authorization: 'Bearer bearer-secret' },
      });
      assert.equal(answer.status, 200);
      const reqId = String(answer.headers['x-request-id']);
      assert.match(reqId, /^[0-9a-f-]{36}$/);
      assert.equal(seenByOrigin.at(-1)?.['x-request-id'], reqId);
      const lines = logged(reqId);
      assert.equal(lines.length, 1, JSON.stringify(logs));
      const line = lines[0] as LogLine;
      assert.deepEqual(
        { ...line, durationMs: typeof line.durationMs, upstreamMs: typeof line.upstreamMs },
        {
          level: 'info',
          msg: 'request',
          reqId,
          host: 'echo.platform.test',
          project: 'echo',
          method: 'GET',
          path: '/api/things',
          status: 200,
          durationMs: 'number',
          bytes: line.bytes,
          upstreamMs: 'number',
        },
      );
      assert.ok((line.upstreamMs as number) <= (line.durationMs as number));
      // Status line, headers and the 24-byte body all count.
      assert.ok((line.bytes as number) > 24 + 100, String(line.bytes));
      const everything = JSON.stringify(logs);
      for (const secret of ['cookie-secret', 'bearer-secret', 'query-secret']) {
        assert.ok(!everything.includes(secret), `${secret} must not be logged`);
      }
    });

    it('logs a request with a body once it is answered', async () => {
      const answer = await call('echo.platform.test', '/api/things', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'x'.repeat(5000) }),
      });
      assert.equal(answer.status, 200);
      const lines = logged(String(answer.headers['x-request-id']));
      assert.deepEqual(
        lines.map((l) => [l.method, l.path, l.status]),
        [['POST', '/api/things', 200]],
      );
      assert.ok((lines[0]?.bytes as number) > 100);
    });

    it("gives every request the edge's own id, never the caller's, also for the control plane", async () => {
      const proxied = await call('echo.platform.test', '/api/x', { headers: { 'x-request-id': 'req-7' } });
      const proxiedId = String(proxied.headers['x-request-id']);
      assert.match(proxiedId, /^[0-9a-f-]{36}$/);
      assert.equal(seenByOrigin.at(-1)?.['x-request-id'], proxiedId);
      const platform = await call('platform.test', '/api/v1/me', { headers: { 'x-request-id': 'req-8' } });
      assert.equal(platform.status, 401);
      const platformId = String(platform.headers['x-request-id']);
      assert.match(platformId, /^[0-9a-f-]{36}$/);
      assert.deepEqual(logged('req-8'), []);
      assert.deepEqual(
        logged(platformId).map((l) => [l.project, l.path, l.status]),
        [['_platform', '/api/v1/me', 401]],
      );
      const generated = await call('platform.test', '/api/v1/me');
      assert.match(String(generated.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    });

    it('counts and logs origin failures by kind, with the request id', async () => {
      const refused = await call('down.platform.test', '/api/pets');
      assert.equal(refused.status, 502);
      const refusedId = String(refused.headers['x-request-id']);
      assert.deepEqual(
        logged(refusedId).map((l) => [l.level, l.msg, l.kind ?? l.status]),
        [
          ['warn', 'origin request failed', 'connect_refused'],
          ['info', 'request', 502],
        ],
      );
      const slow = await call('echo.platform.test', '/api/slow');
      assert.equal(slow.status, 504);
      const slowId = String(slow.headers['x-request-id']);
      assert.deepEqual(
        logged(slowId).map((l) => [l.level, l.kind ?? l.status]),
        [
          ['warn', 'timeout'],
          ['info', 504],
        ],
      );
      const text = await registry.metrics();
      assert.equal(sample(text, 'kennel_edge_proxy_errors_total{kind="connect_refused"}'), 1);
      assert.equal(sample(text, 'kennel_edge_proxy_errors_total{kind="timeout"}'), 1);
      assert.equal(sample(text, 'kennel_edge_proxy_errors_total{kind="reset"}'), 0);
    });

    it('labels metrics by project slug and status class; every unknown host folds into _unknown', async () => {
      const before = await registry.metrics();
      const count = (text: string, project: string, status: string) =>
        sample(
          text,
          `kennel_edge_request_duration_seconds_count{project="${project}",status_class="${status}"}`,
        ) ?? 0;
      for (const host of ['a.example', 'b.example', 'c.platform.test']) {
        assert.equal((await call(host, '/')).status, 404);
      }
      assert.equal((await call('echo.platform.test', '/api/one')).status, 200);
      assert.equal((await call('echo.platform.test', '/nothing-here')).status, 404);
      const text = await registry.metrics();
      assert.equal(count(text, '_unknown', '4xx') - count(before, '_unknown', '4xx'), 3);
      assert.equal(count(text, 'echo', '2xx') - count(before, 'echo', '2xx'), 1);
      assert.equal(count(text, 'echo', '4xx') - count(before, 'echo', '4xx'), 1);
      assert.ok(!text.includes('a.example') && !text.includes('b.example'), 'hostnames are not labels');
      assert.match(
        text,
        /kennel_edge_request_duration_seconds_bucket\{le="0\.005",project="echo",status_class="2xx"\} \d+/,
      );
      const unknownLines = logs.filter((l) => l.host === 'a.example');
      assert.deepEqual(
        unknownLines.map((l) => [l.project, l.status]),
        [['_unknown', 404]],
      );
    });

    it('when draining: readiness 503 at once, live still 200, responses close their connection', async () => {
      health.startDraining();
      const ready = await call('echo.platform.test', '/readyz');
      assert.equal(ready.status, 503);
      assert.deepEqual(JSON.parse(ready.text), { status: 'draining', checks: { database: 'ok' } });
      assert.equal((await call('echo.platform.test', '/healthz')).status, 200);
      const served = await call('echo.platform.test', '/api/last', { headers: { connection: 'keep-alive' } });
      assert.equal(served.status, 200);
      assert.equal(served.headers.connection, 'close');
    });
  });
}
