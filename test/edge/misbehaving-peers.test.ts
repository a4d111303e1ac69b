import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import {
  type AddressInfo,
  connect,
  createServer as createTcpServer,
  type Server as TcpServer,
} from 'node:net';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { OriginProxy, originGuard } from '../../src/edge/index.ts';
import { type LoopbackServer, startProxyFront } from '../support/edge-site.ts';

/**
 * Clients and origins that misbehave, against OriginProxy between a real client and real origins:
 * clients that stop reading a large answer and leave (their origin connections must not stay
 * paused in the pool), an origin that trickles its head or sends 1xx forever (a deadline, not a
 * timer reset by each byte), one that breaks its chunked framing, and one that refuses a large
 * body early with 413.
 */
const RESPONSE_TIMEOUT_MS = 600;
const EIGHT_MIB = Buffer.alloc(8 * 1024 * 1024, 'k');

const portOf = (server: Server | TcpServer) => (server.address() as AddressInfo).port;
const listen = (server: Server | TcpServer) =>
  new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));

function get(
  port: number,
  path: string,
  init: { method?: string; body?: Buffer; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: init.method ?? 'GET', agent: false, headers: init.headers },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ms: performance.now() - started }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

/** A raw TCP origin: `answer` writes whatever it likes on each connection. */
function rawOrigin(answer: (socket: import('node:net').Socket) => void): TcpServer {
  const server = createTcpServer((socket) => {
    socket.on('error', () => {});
    socket.once('data', () => answer(socket));
  });
  return server;
}

describe('the edge survives clients and origins that misbehave', () => {
  let bigOrigin: Server;
  let openOriginSockets = 0;
  let front: LoopbackServer;
  let proxy: OriginProxy;
  const origins = new Map<string, string>();
  const raws: TcpServer[] = [];
  let limited: FastifyInstance;

  before(async () => {
    bigOrigin = createServer((req, res) => {
      if (req.url === '/big') {
        res.writeHead(200, {
          'content-type': 'application/octet-stream',
          'content-length': EIGHT_MIB.length,
        });
        res.end(EIGHT_MIB);
      } else {
        res.end('small');
      }
    });
    bigOrigin.on('connection', (socket) => {
      openOriginSockets++;
      socket.on('close', () => openOriginSockets--);
    });
    await listen(bigOrigin);
    origins.set('big', `http://127.0.0.1:${portOf(bigOrigin)}`);
    // A Fastify origin (as the Petstore is) with a 1 KiB body limit: it answers 413 without reading.
    limited = Fastify({ bodyLimit: 1024 });
    limited.post('/upload', async () => ({ ok: true }));
    origins.set('limited', await limited.listen({ port: 0, host: '127.0.0.1' }));

    const trickle = rawOrigin((socket) => {
      const head = 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok';
      let i = 0;
      const tick = setInterval(() => {
        if (socket.destroyed || i >= head.length) return clearInterval(tick);
        socket.write(head[i++] as string);
      }, 50);
      socket.on('close', () => clearInterval(tick));
    });
    const informational = rawOrigin((socket) => {
      const tick = setInterval(() => {
        if (socket.destroyed) return clearInterval(tick);
        socket.write('HTTP/1.1 102 Processing\r\n\r\n');
      }, 50);
      socket.on('close', () => clearInterval(tick));
    });
    const badChunks = rawOrigin((socket) => {
      socket.end(
        'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n',
      );
    });
    for (const [name, server] of [
      ['trickle', trickle],
      ['informational', informational],
      ['bad-chunks', badChunks],
    ] as const) {
      await listen(server);
      raws.push(server);
      origins.set(name, `http://127.0.0.1:${portOf(server)}`);
    }

    proxy = new OriginProxy({
      guard: originGuard({ allowlist: [...origins.values()] }),
      connectTimeoutMs: 1000,
      responseTimeoutMs: RESPONSE_TIMEOUT_MS,
    });
    front = await startProxyFront(proxy, (url) => {
      const [, name = '', ...rest] = url.split('/');
      return [origins.get(name) ?? 'http://127.0.0.1:9', `/${rest.join('/')}`];
    });
  });

  after(async () => {
    front?.close();
    bigOrigin?.closeAllConnections();
    bigOrigin?.close();
    for (const server of raws) server.close();
    await proxy?.close();
    await limited?.close();
  });

  /** A client that reads the head of an 8 MiB answer, then stops reading and leaves. */
  function abandon(port: number): Promise<void> {
    return new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      socket.write('GET /big/big HTTP/1.1\r\nHost: x\r\n\r\n');
      socket.once('data', () => {
        socket.pause();
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 20);
      });
    });
  }

  it('clients that stop reading large answers and leave do not exhaust the origin pool', async () => {
    // More abandoned answers than the pool has connections (128): each would keep one paused.
    for (let wave = 0; wave < 4; wave++) {
      await Promise.all(Array.from({ length: 40 }, () => abandon(front.port)));
    }
    const after = await get(front.port, '/big/small');
    assert.equal(after.status, 200);
    assert.equal(after.body, 'small');
    // The abandoned answers' origin connections were discarded, not left paused.
    const deadline = Date.now() + 3000;
    while (openOriginSockets > 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.ok(openOriginSockets <= 4, `${openOriginSockets} origin connections still open`);
  });

  it('a client that stops reading but stays connected is cut after the response timeout', async () => {
    const before = openOriginSockets;
    const socket = connect(front.port, '127.0.0.1');
    socket.on('error', () => {});
    socket.write('GET /big/big HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    socket.pause();
    const started = performance.now();
    // A paused socket never reports its end: watch the edge's side instead — its connection to the
    // client, and the origin connection that served the answer, both go.
    const deadline = Date.now() + RESPONSE_TIMEOUT_MS * 8;
    let clients = Number.POSITIVE_INFINITY;
    while (Date.now() < deadline) {
      clients = await new Promise<number>((resolve) => front.server.getConnections((_e, n) => resolve(n)));
      if (clients === 0 && openOriginSockets <= before) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const ms = performance.now() - started;
    socket.destroy();
    assert.equal(clients, 0, 'the stalled client was cut');
    assert.ok(openOriginSockets <= before, "the stalled answer's origin connection was discarded");
    assert.ok(ms >= RESPONSE_TIMEOUT_MS * 0.8, `cut after ${Math.round(ms)} ms, before the timeout`);
  });

  it('clients that leave in the middle of a body leave nothing behind in the proxy', async () => {
    await Promise.all(
      Array.from(
        { length: 20 },
        () =>
          new Promise<void>((resolve) => {
            const socket = connect(front.port, '127.0.0.1');
            socket.on('error', () => {});
            socket.write('POST /big/upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n0123456789');
            setTimeout(() => {
              socket.destroy();
              resolve();
            }, 20);
          }),
      ),
    );
    // Let go when the client goes, well before any deadline would sweep them.
    const deadline = Date.now() + RESPONSE_TIMEOUT_MS / 2;
    while (proxy.waiting > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(proxy.waiting, 0, 'no exchange left waiting for a request that never came');
  });

  it('an origin that trickles its head one byte at a time gets 504 at the deadline', async () => {
    const answer = await get(front.port, '/trickle/x');
    assert.equal(answer.status, 504);
    assert.equal((JSON.parse(answer.body) as { code: string }).code, 'origin_timeout');
    assert.ok(answer.ms < RESPONSE_TIMEOUT_MS * 4, `answered after ${Math.round(answer.ms)} ms`);
  });

  it('an origin that sends 1xx answers forever gets 504 at the deadline', async () => {
    const answer = await get(front.port, '/informational/x');
    assert.equal(answer.status, 504);
    assert.equal((JSON.parse(answer.body) as { code: string }).code, 'origin_timeout');
    assert.ok(answer.ms < RESPONSE_TIMEOUT_MS * 4, `answered after ${Math.round(answer.ms)} ms`);
  });

  it('an origin that breaks its chunked framing gives the client a 502 Error body', async () => {
    const answer = await get(front.port, '/bad-chunks/x');
    assert.equal(answer.status, 502);
    assert.deepEqual(JSON.parse(answer.body), {
      code: 'origin_bad_response',
      message:
        "The project's API sent a malformed answer. Try again; if it persists, the project's owner should check its origin.",
      status: 502,
    });
  });

  it("a body over the origin's limit gets the origin's 413, not a 502", async () => {
    const answer = await get(front.port, '/limited/upload', {
      method: 'POST',
      body: Buffer.alloc(512 * 1024, 'a'),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(answer.status, 413);
    assert.equal((JSON.parse(answer.body) as { code: string }).code, 'FST_ERR_CTP_BODY_TOO_LARGE');
  });
});
