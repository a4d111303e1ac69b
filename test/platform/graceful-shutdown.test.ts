import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { petstoreDocument } from '../../src/petstore/index.ts';
import { createTestStorage, type TestStorage, testDialects } from '../support/databases.ts';
import { requestAs } from '../support/http.ts';
import { TEST_DEPRECATION } from '../support/petstore.ts';
import { type RunningProcess, startProcess, storageEnv } from '../support/processes.ts';

const PASSWORD = 'a long enough password';

/** An origin whose `/slow` answers after `slowMs`; `arrived` resolves when a slow request is in. */
async function startSlowOrigin(slowMs: number) {
  let arrived: () => void = () => {};
  const slowArrived = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const server: Server = createServer((req, res) => {
    const slow = req.url === '/slow';
    if (slow) arrived();
    setTimeout(
      () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ path: req.url, requestId: req.headers['x-request-id'] }));
      },
      slow ? slowMs : 0,
    ).unref();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, slowArrived };
}

/** Starts the platform and points the Petstore project at `originUrl` through the management API. */
async function startPlatform(storage: TestStorage, originUrl: string, extra: Record<string, string>) {
  const server = await startProcess('platform.ts', {
    DATA_DIR: mkdtempSync(join(tmpdir(), 'kennel-shutdown-')),
    ...storageEnv(storage.location),
    HTTP_PORT: '0',
    HTTPS_PORT: '0',
    PETSTORE_PORT: '0',
    METRICS_PORT: '0',
    KENNEL_ADMIN_PASSWORD: PASSWORD,
    // The test's origin listens on loopback, where projects may point only when allowlisted.
    KENNEL_ORIGIN_ALLOWLIST: originUrl,
    ...extra,
  });
  const metricsUrl = /"metrics":"(http:\/\/[^"]+)"/.exec(server.output())?.[1];
  assert.ok(metricsUrl, server.output());
  const platform = server.url.replace('127.0.0.1', 'localhost');
  const session = await fetch(`${platform}/api/v1/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'admin@localhost', password: PASSWORD }),
  });
  assert.equal(session.status, 201);
  const { csrfToken } = (await session.json()) as { csrfToken: string };
  const deployed = await fetch(`${platform}/api/v1/projects/petstore/deploys`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      cookie: (session.headers.get('set-cookie') ?? '').split(';')[0] ?? '',
      'x-csrf-token': csrfToken,
    },
    body: JSON.stringify({ document: JSON.stringify(petstoreDocument(TEST_DEPRECATION)), originUrl }),
  });
  assert.equal(deployed.status, 201, await deployed.text());
  return { server, metricsUrl, edgePort: Number(new URL(server.url).port) };
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 5_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

for (const dialect of testDialects()) {
  describe(`graceful shutdown of a running platform, and its operator listener (${dialect})`, () => {
    let storage: TestStorage | undefined;
    let running: RunningProcess | undefined;
    let origin: Server | undefined;
    after(async () => {
      await running?.stop('SIGKILL');
      origin?.close();
      await storage?.drop();
    });

    it('on SIGTERM: readiness 503, new connections refused, the slow request in flight answered 200, exit 0', async () => {
      storage = await createTestStorage(dialect);
      const slowOrigin = await startSlowOrigin(1_500);
      origin = slowOrigin.server;
      const started = await startPlatform(storage, slowOrigin.url, { SHUTDOWN_TIMEOUT: '20s' });
      running = started.server;
      const { edgePort, metricsUrl } = started;

      // Running: ready on the edge and the operator listener; metrics only on the latter.
      const fast = await requestAs(edgePort, 'petstore.localhost', '/api/fast');
      assert.equal(fast.status, 200);
      assert.equal(JSON.parse(fast.text).requestId, fast.headers['x-request-id']);
      assert.equal((await requestAs(edgePort, 'petstore.localhost', '/readyz')).status, 200);
      assert.equal((await fetch(`${metricsUrl}/readyz`)).status, 200);
      const metrics = await fetch(`${metricsUrl}/metrics`);
      assert.equal(metrics.status, 200);
      assert.match(String(metrics.headers.get('content-type')), /^text\/plain; version=0\.0\.4/);
      const text = await metrics.text();
      assert.match(
        text,
        /kennel_edge_request_duration_seconds_count\{project="petstore",status_class="2xx"\} 1\n/,
      );
      assert.match(text, /kennel_certificates\{state="pending"\} 0\n/);
      assert.match(text, /process_cpu_seconds_total/);
      const publicMetrics = await requestAs(edgePort, 'petstore.localhost', '/metrics');
      assert.equal(publicMetrics.status, 404, 'metrics are not served on the public ports');
      assert.equal((await requestAs(edgePort, 'localhost', '/metrics')).status, 404);

      const slow = requestAs(edgePort, 'petstore.localhost', '/api/slow');
      await slowOrigin.slowArrived;
      const exited = once(running.child, 'exit');
      running.child.kill('SIGTERM');

      const draining = await waitFor('readiness to turn 503', async () => {
        const ready = await fetch(`${metricsUrl}/readyz`);
        return ready.status === 503 ? await ready.json() : undefined;
      });
      assert.deepEqual(draining, { status: 'draining', checks: { database: 'ok' } });
      await assert.rejects(requestAs(edgePort, 'petstore.localhost', '/api/fast'), { code: 'ECONNREFUSED' });

      const answer = await slow;
      assert.equal(answer.status, 200);
      assert.equal(JSON.parse(answer.text).path, '/slow');
      const [code] = await exited;
      assert.equal(code, 0, running.output());
      const lines = running
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const slowLine = lines.find((l) => l.msg === 'request' && l.reqId === answer.headers['x-request-id']);
      assert.equal(slowLine?.status, 200);
      assert.equal(slowLine?.path, '/api/slow');
      assert.ok((slowLine?.upstreamMs as number) >= 1_400, JSON.stringify(slowLine));
      const messages = lines.map((l) => l.msg);
      assert.ok(messages.indexOf('shutting down: draining connections') < messages.indexOf('stopped'));
      assert.ok(!messages.includes('drain timed out: connections cut'));
      running = undefined;
    });

    if (dialect === 'sqlite') {
      it('cuts a request still in flight after SHUTDOWN_TIMEOUT and still exits 0', async () => {
        const local = await createTestStorage(dialect);
        const slowOrigin = await startSlowOrigin(20_000);
        const { server, edgePort } = await startPlatform(local, slowOrigin.url, {
          SHUTDOWN_TIMEOUT: '300ms',
        });
        try {
          const slow = requestAs(edgePort, 'petstore.localhost', '/api/slow');
          await slowOrigin.slowArrived;
          const exited = once(server.child, 'exit');
          const signalled = Date.now();
          server.child.kill('SIGTERM');
          await assert.rejects(slow, { code: 'ECONNRESET' });
          const [code] = await exited;
          assert.equal(code, 0, server.output());
          assert.ok(Date.now() - signalled < 5_000, `exited ${Date.now() - signalled} ms after SIGTERM`);
          assert.match(server.output(), /"msg":"drain timed out: connections cut"/);
        } finally {
          await server.stop('SIGKILL');
          slowOrigin.server.close();
          await local.drop();
        }
      });
    }
  });
}
