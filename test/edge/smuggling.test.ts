import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { closeAll } from '../support/cleanup.ts';
import { type HttpEdge, startHttpEdge } from '../support/edge.ts';
import type { SeenRequest } from '../support/edge-site.ts';
import { SMUGGLED, type SmugglingTarget, startSmugglingTarget } from '../support/edge-smuggling.ts';

/**
 * The request-smuggling corpus: each attack goes to the edge on a connection of its own, and a
 * victim's request follows on another. Whatever the attack, the origin never reads a request the
 * edge did not forward (the payloads carry a complete `GET /smuggled` and an unfinished
 * `DELETE /pets/2 … X-Ignore:` that would swallow the victim's request line), the victim gets its
 * own answer, and the forwarding headers are the edge's. Ambiguous framing is refused with 400.
 */
/** Sends raw bytes on a fresh connection and returns everything the edge answered. */
function raw(port: number, bytes: string, waitMs = 1500): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      answer += chunk;
    });
    const done = () => resolve(answer);
    socket.on('close', done);
    socket.on('error', done);
    socket.write(bytes);
    setTimeout(() => socket.destroy(), waitMs);
  });
}

const statusLines = (answer: string) => answer.match(/HTTP\/1\.1 \d{3}/g) ?? [];

function victim(port: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/api/victim',
        agent: false,
        headers: { host: 'shop.platform.test', authorization: 'Bearer victim-secret' },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('request smuggling through the edge: the edge owns the framing', () => {
  let target: SmugglingTarget;
  let edge: HttpEdge;
  let edgePort: number;
  let seen: SeenRequest[];

  before(async () => {
    target = await startSmugglingTarget(({ url, headers }) => ({ url, auth: headers.authorization ?? null }));
    seen = target.origin.seen;
    edge = await startHttpEdge(target.site.p.ctx, { connectTimeoutMs: 1000, responseTimeoutMs: 2000 });
    edgePort = edge.port;
  });

  after(() => closeAll(edge, target));

  const head = (lines: string[]) => `${lines.join('\r\n')}\r\n\r\n`;
  const post = (extra: string[]) => ['POST /api/attack HTTP/1.1', 'Host: shop.platform.test', ...extra];
  const chunk = (text: string) => `${text.length.toString(16)}\r\n${text}\r\n`;
  const length = Buffer.byteLength(SMUGGLED, 'latin1');

  /** `forwarded`: the origin sees exactly one request, /attack, with this body; `refused`: 400, nothing reaches it. */
  const corpus: { name: string; bytes: string; expect: { forwarded: string } | 'refused' }[] = [
    {
      name: 'Connection: content-length with a Content-Length body (the reported attack)',
      bytes: head(post(['Connection: content-length', `Content-Length: ${length}`])) + SMUGGLED,
      expect: { forwarded: SMUGGLED },
    },
    {
      name: 'Connection: Content-Length in other casing, in a list',
      bytes: head(post(['Connection: keep-alive, CONTENT-Length', `Content-Length: ${length}`])) + SMUGGLED,
      expect: { forwarded: SMUGGLED },
    },
    {
      name: 'Connection: transfer-encoding with a chunked body',
      bytes: `${head(post(['Connection: Transfer-Encoding', 'Transfer-Encoding: chunked']))}${chunk(SMUGGLED)}0\r\n\r\n`,
      expect: { forwarded: SMUGGLED },
    },
    {
      name: 'Connection naming the forwarding headers and the request id',
      bytes:
        head(
          post([
            'Connection: x-forwarded-for, forwarded, x-request-id, host',
            'X-Forwarded-For: 10.0.0.1',
            `Content-Length: ${length}`,
          ]),
        ) + SMUGGLED,
      expect: { forwarded: SMUGGLED },
    },
    {
      name: 'CL.TE: Content-Length and Transfer-Encoding',
      bytes: `${head(post([`Content-Length: ${length + 5}`, 'Transfer-Encoding: chunked']))}0\r\n\r\n${SMUGGLED}`,
      expect: 'refused',
    },
    {
      name: 'TE.CL: Transfer-Encoding then Content-Length',
      bytes: `${head(post(['Transfer-Encoding: chunked', 'Content-Length: 3']))}${chunk(SMUGGLED)}0\r\n\r\n`,
      expect: 'refused',
    },
    {
      name: 'duplicate Content-Length, same value',
      bytes: head(post([`Content-Length: ${length}`, `Content-Length: ${length}`])) + SMUGGLED,
      expect: 'refused',
    },
    {
      name: 'duplicate Content-Length, different values',
      bytes: head(post(['Content-Length: 0', `Content-Length: ${length}`])) + SMUGGLED,
      expect: 'refused',
    },
    {
      name: 'list-valued Content-Length',
      bytes: head(post([`Content-Length: ${length}, ${length}`])) + SMUGGLED,
      expect: 'refused',
    },
    {
      name: 'Transfer-Encoding: chunked, identity',
      bytes: `${head(post(['Transfer-Encoding: chunked, identity']))}${chunk(SMUGGLED)}0\r\n\r\n`,
      expect: 'refused',
    },
    {
      name: 'Transfer-Encoding: identity, chunked (accepted by node:http, refused by the edge)',
      bytes: `${head(post(['Transfer-Encoding: identity, chunked']))}${chunk(SMUGGLED)}0\r\n\r\n`,
      expect: 'refused',
    },
    {
      name: 'Transfer-Encoding in odd casing and whitespace',
      bytes: `${head(post(['Transfer-Encoding:  ChUnKeD ']))}${chunk(SMUGGLED)}0\r\n\r\n`,
      expect: { forwarded: SMUGGLED },
    },
    {
      name: 'Transfer-Encoding with a space before the colon',
      bytes: `${head(post(['Transfer-Encoding : chunked']))}${chunk(SMUGGLED)}0\r\n\r\n`,
      expect: 'refused',
    },
    {
      name: 'Transfer-Encoding twice',
      bytes: `${head(post(['Transfer-Encoding: chunked', 'Transfer-Encoding: chunked']))}${chunk(SMUGGLED)}0\r\n\r\n`,
      expect: 'refused',
    },
    {
      name: 'Transfer-Encoding: xchunked',
      bytes: `${head(post(['Transfer-Encoding: xchunked']))}${chunk(SMUGGLED)}0\r\n\r\n`,
      expect: 'refused',
    },
    {
      name: 'obs-fold hiding a Transfer-Encoding',
      bytes: `${head(post(['X-A: b', ' Transfer-Encoding: chunked', `Content-Length: ${length}`]))}${SMUGGLED}`,
      expect: 'refused',
    },
    {
      name: 'bare LF line endings',
      bytes: `POST /api/attack HTTP/1.1\nHost: shop.platform.test\nContent-Length: ${length}\n\n${SMUGGLED}`,
      expect: 'refused',
    },
    {
      name: 'bare CR inside the head',
      bytes: `POST /api/attack HTTP/1.1\r\nHost: shop.platform.test\rContent-Length: 0\r\nContent-Length: ${length}\r\n\r\n${SMUGGLED}`,
      expect: 'refused',
    },
    {
      name: 'chunk extensions',
      bytes: `${head(post(['Transfer-Encoding: chunked']))}${SMUGGLED.length.toString(16)};ext=1;q="a"\r\n${SMUGGLED}\r\n0\r\n\r\n`,
      expect: { forwarded: SMUGGLED },
    },
    {
      name: 'a bad chunk size',
      bytes: `${head(post(['Transfer-Encoding: chunked']))}5x\r\nabcde\r\n0\r\n\r\n${SMUGGLED}`,
      expect: 'refused',
    },
    {
      name: 'an overflowing chunk size',
      bytes: `${head(post(['Transfer-Encoding: chunked']))}FFFFFFFFFFFFFFFFF\r\nabcde\r\n0\r\n\r\n`,
      expect: 'refused',
    },
    {
      name: 'a negative Content-Length',
      bytes: `${head(post(['Content-Length: -1']))}${SMUGGLED}`,
      expect: 'refused',
    },
    {
      name: 'two Host headers',
      bytes: head(['GET /api/attack HTTP/1.1', 'Host: shop.platform.test', 'Host: other.platform.test']),
      expect: 'refused',
    },
    {
      name: 'a GET with a body that holds a request',
      bytes:
        head(['GET /api/attack HTTP/1.1', 'Host: shop.platform.test', `Content-Length: ${length}`]) +
        SMUGGLED,
      expect: { forwarded: SMUGGLED },
    },
  ];

  for (const attack of corpus) {
    it(`${attack.name}: ${attack.expect === 'refused' ? 'refused with 400' : 'forwarded as one request'}, victim unharmed`, async () => {
      seen.length = 0;
      const answer = await raw(edgePort, attack.bytes);
      const after = await victim(edgePort);
      assert.equal(after.status, 200);
      assert.deepEqual(JSON.parse(after.body), { url: '/victim', auth: 'Bearer victim-secret' });
      if (attack.expect === 'refused') {
        assert.deepEqual(statusLines(answer), ['HTTP/1.1 400']);
        assert.deepEqual(
          seen.map((s) => s.url),
          ['/victim'],
        );
      } else {
        assert.deepEqual(statusLines(answer).slice(0, 1), ['HTTP/1.1 200']);
        assert.deepEqual(
          seen.map((s) => [s.url, s.body]),
          [
            ['/attack', attack.expect.forwarded],
            ['/victim', ''],
          ],
        );
        const forwarded = seen[0] as SeenRequest;
        assert.equal(forwarded.headers['x-forwarded-for'], '127.0.0.1');
        assert.equal(forwarded.headers.forwarded, 'for=127.0.0.1;host=shop.platform.test;proto=http');
        assert.match(String(forwarded.headers['x-request-id']), /^[0-9a-f-]{36}$/);
      }
      // The smuggled requests never reached the origin, whatever the attack.
      assert.ok(!seen.some((s) => s.url === '/smuggled' || s.method === 'DELETE'));
    });
  }

  it('Expect: 100-continue is answered by the edge, never passed on', async () => {
    seen.length = 0;
    const answer = await raw(edgePort, `${head(post(['Expect: 100-continue', 'Content-Length: 4']))}abcd`);
    assert.deepEqual(statusLines(answer), ['HTTP/1.1 100', 'HTTP/1.1 200']);
    assert.deepEqual(
      seen.map((s) => [s.url, s.body, s.headers.expect]),
      [['/attack', 'abcd', undefined]],
    );
  });

  it('Upgrade: h2c is forwarded as a plain request, without the upgrade or its settings', async () => {
    seen.length = 0;
    const answer = await raw(
      edgePort,
      head([
        'GET /api/attack HTTP/1.1',
        'Host: shop.platform.test',
        'Connection: Upgrade, HTTP2-Settings',
        'Upgrade: h2c',
        'HTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA',
      ]),
    );
    assert.deepEqual(statusLines(answer), ['HTTP/1.1 200']);
    const forwarded = seen[0] as SeenRequest;
    assert.equal(forwarded.headers.upgrade, undefined);
    assert.equal(forwarded.headers['http2-settings'], undefined);
    assert.notEqual(forwarded.headers.connection, 'Upgrade, HTTP2-Settings');
  });

  it('HTTP/1.0 and pipelined requests are answered in order, each forwarded with its own framing', async () => {
    seen.length = 0;
    const old = await raw(edgePort, 'GET /api/old HTTP/1.0\r\nHost: shop.platform.test\r\n\r\n', 5000);
    assert.match(old, /^HTTP\/1\.1 200/);
    const pipelined = await raw(
      edgePort,
      head(['GET /api/one HTTP/1.1', 'Host: shop.platform.test']) +
        head(post(['Content-Length: 4'])) +
        'abcd' +
        head(['GET /api/three HTTP/1.1', 'Host: shop.platform.test', 'Connection: close']),
      5000,
    );
    assert.deepEqual(statusLines(pipelined), ['HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 200']);
    // Answered in the order asked (node:http keeps it), each with its own origin answer.
    assert.deepEqual(
      [...pipelined.matchAll(/"url":"([^"]+)"/g)].map((m) => m[1]),
      ['/one', '/attack', '/three'],
    );
    // The origin may see them in any order (they travel on separate pooled connections), but each
    // exactly once with its own framing.
    assert.deepEqual(
      seen.map((s) => [s.method, s.url, s.body]).sort((a, b) => String(a[1]).localeCompare(String(b[1]))),
      [
        ['POST', '/attack', 'abcd'],
        ['GET', '/old', ''],
        ['GET', '/one', ''],
        ['GET', '/three', ''],
      ],
    );
  });
});
