import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { OriginProxy, originGuard } from '../../src/edge/index.ts';
import { type LoopbackServer, startProxyFront } from '../support/edge-site.ts';

/**
 * OriginProxy on its own, between a real client and a real origin: the bytes of every kind of
 * answer arrive unchanged (the proxy sends a whole small answer as a latin1 string with the head,
 * a larger one chunk by chunk with backpressure), and a client that leaves stops the origin's.
 */
const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
const BIG = Buffer.alloc(3 * 1024 * 1024, 'kennel-');

const port = (server: Server) => (server.address() as AddressInfo).port;
const listen = (server: Server) =>
  new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));

function fetchRaw(
  serverPort: number,
  method: string,
  path: string,
  body?: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: serverPort, method, path }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('the origin proxy: answers byte for byte, large answers streamed, abandoned answers stopped', () => {
  let origin: Server;
  let front: LoopbackServer;
  let proxy: OriginProxy;
  let streaming: ServerResponse | undefined;
  let streamingStarted: () => void = () => {};

  before(async () => {
    origin = createServer((req, res) => {
      if (req.url === '/bytes') {
        res.writeHead(201, {
          'content-type': 'application/octet-stream',
          'content-length': ALL_BYTES.length,
          'set-cookie': ['a=1', 'b=2'],
          'keep-alive': 'timeout=77',
        });
        res.end(ALL_BYTES);
      } else if (req.url === '/big') {
        // No Content-Length: chunked, many chunks.
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(BIG);
      } else if (req.url === '/echo') {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end(`${req.method} ${Buffer.concat(chunks).toString()}`);
        });
      } else if (req.url === '/forever') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        streaming = res;
        const tick = setInterval(() => res.write('x'.repeat(1024)), 5);
        res.on('close', () => clearInterval(tick));
        streamingStarted();
      } else {
        res.writeHead(404).end();
      }
    });
    await listen(origin);
    proxy = new OriginProxy({
      guard: originGuard({ allowlist: [`http://127.0.0.1:${port(origin)}`] }),
      connectTimeoutMs: 1000,
      responseTimeoutMs: 5000,
    });
    front = await startProxyFront(proxy, (url) => [`http://127.0.0.1:${port(origin)}`, url]);
  });

  after(async () => {
    front?.server.close();
    origin?.closeAllConnections();
    origin?.close();
    await proxy?.close();
  });

  it('passes a small binary answer unchanged: status, every byte, repeated headers; drops hop-by-hop ones', async () => {
    const answer = await fetchRaw(front.port, 'GET', '/bytes');
    assert.equal(answer.status, 201);
    assert.deepEqual(answer.body, ALL_BYTES);
    assert.equal(answer.headers['content-length'], '256');
    assert.deepEqual(answer.headers['set-cookie'], ['a=1', 'b=2']);
    assert.equal(answer.headers['x-request-id'], 'req-1');
    // The origin's Keep-Alive describes its own connection: not copied (node:http sets the front's).
    assert.equal(answer.headers['keep-alive'], 'timeout=5');
  });

  it('answers HEAD with the headers and no body', async () => {
    const answer = await fetchRaw(front.port, 'HEAD', '/bytes');
    assert.equal(answer.status, 201);
    assert.equal(answer.headers['content-length'], '256');
    assert.equal(answer.body.length, 0);
  });

  it('streams a large answer whole, and forwards a request body', async () => {
    const answer = await fetchRaw(front.port, 'GET', '/big');
    assert.equal(answer.status, 200);
    assert.equal(answer.body.length, BIG.length);
    assert.equal(
      createHash('sha256').update(answer.body).digest('hex'),
      createHash('sha256').update(BIG).digest('hex'),
    );
    const echoed = await fetchRaw(front.port, 'POST', '/echo', 'héllo');
    assert.equal(echoed.body.toString(), 'POST héllo');
  });

  it("stops reading the origin's answer once the client has gone", async () => {
    const started = new Promise<void>((resolve) => {
      streamingStarted = resolve;
    });
    const req = request({ host: '127.0.0.1', port: front.port, path: '/forever' });
    req.end();
    const [res] = (await once(req, 'response')) as [NodeJS.ReadableStream];
    await once(res, 'data');
    await started;
    const originClosed = once(streaming as ServerResponse, 'close');
    req.destroy();
    await originClosed;
    assert.equal(
      (streaming as ServerResponse).writableFinished,
      false,
      'the origin never finished: it was cut off',
    );
  });
});
