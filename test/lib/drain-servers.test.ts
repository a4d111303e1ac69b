import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Agent, createServer, get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { drainServers } from '../../src/lib/drain-servers.ts';

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}

function fetchText(port: number, path: string, agent?: Agent): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    }).on('error', reject);
  });
}

/** A server whose /slow answers after `slowMs`, reporting when a slow request arrives. */
function slowServer(slowMs: number) {
  let arrived: () => void = () => {};
  const slowArrived = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const server = createServer((req, res) => {
    if (req.url === '/slow') arrived();
    setTimeout(() => res.end(`done ${req.url}`), req.url === '/slow' ? slowMs : 0).unref();
  });
  // Far longer than the test: an idle kept-alive connection must be closed by the drain itself.
  server.keepAliveTimeout = 60_000;
  return { server, slowArrived };
}

describe('draining HTTP servers', () => {
  it('lets a request in flight finish, refuses new connections, closes idle kept-alive ones', async () => {
    const { server, slowArrived } = slowServer(400);
    const port = await listen(server);
    const agent = new Agent({ keepAlive: true });
    try {
      // One connection left idle and kept alive, one busy with a slow request.
      assert.equal((await fetchText(port, '/warm', agent)).text, 'done /warm');
      const slow = fetchText(port, '/slow', agent);
      await slowArrived;
      const started = Date.now();
      const drained = drainServers([server], { timeoutMs: 5_000, pollMs: 20 });
      await assert.rejects(fetchText(port, '/new'), { code: 'ECONNREFUSED' });
      assert.deepEqual(await slow, { status: 200, text: 'done /slow' });
      assert.deepEqual(await drained, { forced: false });
      const took = Date.now() - started;
      assert.ok(took < 1_500, `drained in ${took} ms, not after the keep-alive timeout`);
    } finally {
      agent.destroy();
    }
  });

  it('cuts what is still open after the timeout and says so', async () => {
    const { server, slowArrived } = slowServer(10_000);
    const port = await listen(server);
    const slow = fetchText(port, '/slow');
    await slowArrived;
    const started = Date.now();
    assert.deepEqual(await drainServers([server], { timeoutMs: 200, pollMs: 20 }), { forced: true });
    assert.ok(Date.now() - started < 2_000);
    await assert.rejects(slow, { code: 'ECONNRESET' });
  });

  it('resolves at once for a server that is not listening', async () => {
    const server = createServer();
    assert.deepEqual(await drainServers([server], { timeoutMs: 1_000 }), { forced: false });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    assert.deepEqual(await drainServers([server], { timeoutMs: 1_000 }), { forced: false });
  });
});
