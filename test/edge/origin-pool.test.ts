import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import {
  type OriginErrorCode,
  OriginPool,
  type OriginPoolOptions,
  type OriginRequest,
} from '../../src/edge/http1/origin-pool.ts';
import { createInternalCa, InternalIssuer } from '../../src/platform/certificates/internal-issuer.ts';
import { headerObject } from '../support/http.ts';

/**
 * The edge's origin client against real servers on loopback: node:http origins, and raw TCP ones
 * where the test needs an origin to misbehave exactly (drop a reused connection, stall, close).
 */
const OPTIONS: OriginPoolOptions = {
  maxConnections: 8,
  connectTimeoutMs: 1_000,
  headersTimeoutMs: 2_000,
  bodyTimeoutMs: 2_000,
  idleTimeoutMs: 30_000,
};

interface Answer {
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
}

/** One request through the pool: its answer, or the error's code. */
function send(
  pool: OriginPool,
  request: Partial<OriginRequest> & { path: string },
): Promise<Answer | { error: string }> {
  return new Promise((resolve) => {
    let status = 0;
    let headers: Record<string, string | string[]> = {};
    const chunks: Buffer[] = [];
    pool.request(
      { method: 'GET', headerLines: '', body: null, chunked: false, ...request },
      {
        onHead(s, h) {
          status = s;
          headers = headerObject(h);
        },
        onBody(chunk) {
          chunks.push(Buffer.from(chunk));
        },
        onEnd() {
          resolve({ status, headers, body: Buffer.concat(chunks).toString() });
        },
        onError(error) {
          resolve({ error: String((error as { code?: string }).code ?? error.message) });
        },
      },
    );
  });
}

const answered = (result: Answer | { error: string }): Answer => {
  assert.ok('status' in result, `expected an answer, got ${JSON.stringify(result)}`);
  return result;
};

const failedWith = (result: Answer | { error: string }, code: OriginErrorCode | string) =>
  assert.deepEqual(result, { error: code });

const portOf = (server: Server | HttpServer) => (server.address() as AddressInfo).port;

async function listen<T extends Server | HttpServer>(server: T): Promise<T> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

/** A raw origin: `answer` is called with each request's head and the socket it came on. */
function rawOrigin(answer: (head: string, socket: Socket, index: number) => void) {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let buffered = '';
    let index = 0;
    socket.on('data', (chunk) => {
      buffered += chunk.toString('latin1');
      for (let end = buffered.indexOf('\r\n\r\n'); end !== -1; end = buffered.indexOf('\r\n\r\n')) {
        const head = buffered.slice(0, end);
        buffered = buffered.slice(end + 4);
        answer(head, socket, index++);
      }
    });
  });
  return {
    server,
    get connections() {
      return connections;
    },
    close() {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

describe('the origin pool: kept-alive HTTP/1.1 connections to an origin', () => {
  let origin: HttpServer;
  let connections = 0;
  let pool: OriginPool;

  before(async () => {
    origin = createHttpServer((req, res) => {
      if (req.url === '/slow') {
        setTimeout(() => res.end('slow'), 50);
      } else if (req.url === '/echo') {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () =>
          res.end(
            JSON.stringify({
              method: req.method,
              host: req.headers.host,
              length: req.headers['content-length'] ?? null,
              encoding: req.headers['transfer-encoding'] ?? null,
              body: Buffer.concat(chunks).toString(),
            }),
          ),
        );
      } else if (req.url === '/chunks') {
        res.write('one,');
        setTimeout(() => res.end('two'), 10);
      } else {
        res.setHeader('set-cookie', ['a=1', 'b=2']);
        res.end(`path ${req.url}`);
      }
    });
    origin.on('connection', () => {
      connections += 1;
    });
    await listen(origin);
    pool = new OriginPool(new URL(`http://127.0.0.1:${portOf(origin)}`), { ...OPTIONS, maxConnections: 2 });
  });

  after(async () => {
    await pool?.close();
    origin?.closeAllConnections();
    origin?.close();
  });

  it('reuses one connection for requests in turn, with the origin as Host', async () => {
    const before = connections;
    for (let i = 0; i < 10; i++) {
      const answer = answered(await send(pool, { path: `/n/${i}?q=${i}` }));
      assert.equal(answer.status, 200);
      assert.equal(answer.body, `path /n/${i}?q=${i}`);
      assert.deepEqual(answer.headers['set-cookie'], ['a=1', 'b=2']);
    }
    assert.equal(connections - before, 1);
    assert.deepEqual(pool.size, { open: 1, idle: 1 });
    const echo = JSON.parse(answered(await send(pool, { path: '/echo' })).body) as { host: string };
    assert.equal(echo.host, `127.0.0.1:${portOf(origin)}`);
  });

  it('opens at most maxConnections; waiting requests take the connections as they free up', async () => {
    const before = connections;
    const answers = await Promise.all(Array.from({ length: 6 }, () => send(pool, { path: '/slow' })));
    assert.deepEqual(
      answers.map((a) => answered(a).body),
      Array(6).fill('slow'),
    );
    assert.ok(connections - before <= 1, 'one connection was open already, one more at most');
    assert.equal(pool.size.open, 2);
  });

  it('reads an answer sent in chunks as it comes', async () => {
    const answer = answered(await send(pool, { path: '/chunks' }));
    assert.equal(answer.body, 'one,two');
    assert.equal(answer.headers['transfer-encoding'], 'chunked');
  });

  it('sends a body with its Content-Length, or chunked when its length is unknown', async () => {
    const known = new PassThrough();
    known.end('héllo');
    const withLength = JSON.parse(
      answered(
        await send(pool, {
          method: 'POST',
          path: '/echo',
          headerLines: 'content-length: 6\r\n',
          body: known,
        }),
      ).body,
    );
    assert.deepEqual(withLength, {
      method: 'POST',
      host: withLength.host,
      length: '6',
      encoding: null,
      body: 'héllo',
    });
    const unknown = new PassThrough();
    const sent = send(pool, { method: 'PUT', path: '/echo', body: unknown, chunked: true });
    unknown.write('a'.repeat(70_000));
    setTimeout(() => unknown.end('-end'), 20);
    const chunked = JSON.parse(answered(await sent).body) as {
      length: string | null;
      encoding: string;
      body: string;
    };
    assert.equal(chunked.encoding, 'chunked');
    assert.equal(chunked.length, null);
    assert.equal(chunked.body, `${'a'.repeat(70_000)}-end`);
  });

  it('fails a request whose body the client abandons, and closes that connection', async () => {
    const body = new PassThrough();
    const sent = send(pool, { method: 'POST', path: '/echo', body, chunked: true });
    body.write('partial');
    setTimeout(() => body.destroy(), 20);
    failedWith(await sent, 'ORIGIN_CLOSED');
    // The pool is still good for the next request.
    assert.equal(answered(await send(pool, { path: '/after' })).body, 'path /after');
  });
});

describe('the origin pool with origins that misbehave', () => {
  const closers: (() => unknown)[] = [];
  after(async () => {
    for (const close of closers) await close();
  });

  async function poolFor(origin: ReturnType<typeof rawOrigin>, options: Partial<OriginPoolOptions> = {}) {
    await listen(origin.server);
    const pool = new OriginPool(new URL(`http://127.0.0.1:${portOf(origin.server)}`), {
      ...OPTIONS,
      ...options,
    });
    closers.push(
      () => origin.close(),
      () => pool.close(),
    );
    return pool;
  }

  it('sends a bodiless GET again when a reused connection drops it unanswered, but never a POST', async () => {
    // Answers the first request on each connection, then drops the connection on the second:
    // an origin closing an idle connection just as the next request went out.
    const origin = rawOrigin((_head, socket, index) => {
      if (index === 0) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst');
      else socket.destroy();
    });
    const pool = await poolFor(origin);
    assert.equal(answered(await send(pool, { path: '/a' })).body, 'first');
    assert.equal(answered(await send(pool, { path: '/b' })).body, 'first', 'retried on a new connection');
    assert.equal(origin.connections, 2);
    failedWith(await send(pool, { method: 'POST', path: '/c' }), 'ORIGIN_CLOSED');
    assert.equal(origin.connections, 2, 'the POST was not sent again');
    // A dropped first request (a fresh connection) is not sent again either.
    const refusing = rawOrigin((_head, socket) => socket.destroy());
    const once = await poolFor(refusing);
    failedWith(await send(once, { path: '/x' }), 'ORIGIN_CLOSED');
    assert.equal(refusing.connections, 1);
  });

  it("keeps a connection no longer than the origin's Keep-Alive timeout, less a second", async () => {
    const short = rawOrigin((_head, socket) =>
      socket.write('HTTP/1.1 200 OK\r\nKeep-Alive: timeout=1\r\nContent-Length: 2\r\n\r\nok'),
    );
    const shortPool = await poolFor(short);
    for (let i = 0; i < 3; i++) assert.equal(answered(await send(shortPool, { path: '/' })).body, 'ok');
    assert.equal(short.connections, 3, 'timeout=1 leaves no time to reuse a connection');
    const long = rawOrigin((_head, socket) =>
      socket.write('HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5\r\nContent-Length: 2\r\n\r\nok'),
    );
    const longPool = await poolFor(long);
    for (let i = 0; i < 3; i++) assert.equal(answered(await send(longPool, { path: '/' })).body, 'ok');
    assert.equal(long.connections, 1);
  });

  it('reads a body framed by the close, and does not reuse that connection', async () => {
    const origin = rawOrigin((_head, socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil ');
      setTimeout(() => socket.end('the close'), 20);
    });
    const pool = await poolFor(origin);
    assert.equal(answered(await send(pool, { path: '/' })).body, 'until the close');
    assert.equal(answered(await send(pool, { path: '/' })).body, 'until the close');
    assert.equal(origin.connections, 2);
  });

  it('fails a malformed answer and one cut short, and drops their connections', async () => {
    const origin = rawOrigin((head, socket) => {
      if (head.startsWith('GET /garbage')) socket.write('HTTP/1.1 200 OK\r\nBad Header\r\n\r\n');
      else socket.end('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort');
    });
    const pool = await poolFor(origin);
    failedWith(await send(pool, { path: '/garbage' }), 'ORIGIN_BAD_RESPONSE');
    failedWith(await send(pool, { path: '/short' }), 'ORIGIN_CLOSED');
    assert.equal(origin.connections, 2);
    assert.equal(pool.size.open, 0);
  });

  it('times out an origin that never answers, and one that stalls mid-body', async () => {
    const origin = rawOrigin((head, socket) => {
      if (head.startsWith('GET /stall')) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc');
    });
    const pool = await poolFor(origin, { headersTimeoutMs: 200, bodyTimeoutMs: 300 });
    let started = performance.now();
    failedWith(await send(pool, { path: '/silent' }), 'ORIGIN_HEADERS_TIMEOUT');
    const silentMs = performance.now() - started;
    assert.ok(silentMs >= 200 && silentMs < 1_000, `timed out after ${silentMs} ms`);
    started = performance.now();
    failedWith(await send(pool, { path: '/stall' }), 'ORIGIN_BODY_TIMEOUT');
    const stallMs = performance.now() - started;
    assert.ok(stallMs >= 300 && stallMs < 1_100, `timed out after ${stallMs} ms`);
  });

  it('fails with ECONNREFUSED when nothing listens, and a connect timeout when nothing accepts', async () => {
    const vacant = await listen(createServer());
    const port = portOf(vacant);
    vacant.close();
    await once(vacant, 'close');
    const refused = new OriginPool(new URL(`http://127.0.0.1:${port}`), OPTIONS);
    closers.push(() => refused.close());
    failedWith(await send(refused, { path: '/' }), 'ECONNREFUSED');

    // A listener with a backlog of 0 that never accepts: once its queue is full, SYNs go unanswered.
    const python: ChildProcess = spawn(
      'python3',
      [
        '-c',
        "import socket,time\ns=socket.socket()\ns.bind(('127.0.0.1',0))\ns.listen(0)\nprint(s.getsockname()[1],flush=True)\ntime.sleep(60)",
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    closers.push(() => python.kill());
    const [line] = (await once(python.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
    const stuckPort = Number(line.toString().trim());
    const fillers: Socket[] = [];
    for (let i = 0; i < 2; i++) fillers.push(connect(stuckPort, '127.0.0.1').on('error', () => {}));
    closers.push(() => {
      for (const filler of fillers) filler.destroy();
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const stuck = new OriginPool(new URL(`http://127.0.0.1:${stuckPort}`), {
      ...OPTIONS,
      connectTimeoutMs: 300,
    });
    closers.push(() => stuck.close());
    const started = performance.now();
    failedWith(await send(stuck, { path: '/' }), 'ORIGIN_CONNECT_TIMEOUT');
    assert.ok(performance.now() - started >= 300);
  });

  it('fails waiting requests and closes idle connections when closed', async () => {
    const origin = rawOrigin((head, socket) => {
      if (!head.startsWith('GET /hang')) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
      else setTimeout(() => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nlate'), 100);
    });
    const pool = await poolFor(origin, { maxConnections: 1 });
    assert.equal(answered(await send(pool, { path: '/' })).body, 'ok');
    const underway = send(pool, { path: '/hang' });
    const waiting = send(pool, { path: '/' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const closed = pool.close();
    failedWith(await waiting, 'ORIGIN_POOL_CLOSED');
    assert.equal(answered(await underway).body, 'late', 'a request under way finishes');
    await closed;
    assert.deepEqual(pool.size, { open: 0, idle: 0 });
    failedWith(await send(pool, { path: '/' }), 'ORIGIN_POOL_CLOSED');
  });
});

describe('the origin pool over HTTPS', () => {
  it("verifies the origin's certificate against the given roots, and refuses it otherwise", async () => {
    const ca = await createInternalCa('Origin Test CA');
    const leaf = await new InternalIssuer(ca).issue('localhost');
    const server = createHttpsServer({ cert: leaf.certificatePem, key: leaf.privateKeyPem }, (req, res) =>
      res.end(`secure ${req.url}`),
    );
    await listen(server);
    const url = new URL(`https://localhost:${portOf(server)}`);
    const trusting = new OriginPool(url, { ...OPTIONS, ca: ca.certificatePem });
    const untrusting = new OriginPool(url, OPTIONS);
    try {
      assert.equal(answered(await send(trusting, { path: '/x' })).body, 'secure /x');
      assert.equal(answered(await send(trusting, { path: '/y' })).body, 'secure /y');
      assert.equal(trusting.size.open, 1);
      const refused = await send(untrusting, { path: '/x' });
      assert.ok('error' in refused);
      assert.match(refused.error, /CERT|SIGNATURE|ISSUER/);
    } finally {
      await trusting.close();
      await untrusting.close();
      server.closeAllConnections();
      server.close();
    }
  });
});
