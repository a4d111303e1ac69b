import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ResponseError, ResponseParser } from '../../src/edge/http1/response-parser.ts';
import { headerObject } from '../support/http.ts';

/**
 * The edge's HTTP/1.1 response parser on its own: each framing, every split of the bytes across
 * reads (an origin's answer arrives in whatever pieces TCP gives), and what it refuses.
 */
interface Parsed {
  status: number | undefined;
  headers: Record<string, string | string[]> | undefined;
  bodyLength: number | undefined;
  body: string;
  complete: number;
  keepAlive: boolean;
  keepAliveMs: number | undefined;
}

function parser(noBody = false) {
  const seen: Parsed = {
    status: undefined,
    headers: undefined,
    bodyLength: undefined,
    body: '',
    complete: 0,
    keepAlive: true,
    keepAliveMs: undefined,
  };
  const p = new ResponseParser({
    onHead(status, headers, bodyLength) {
      assert.equal(seen.status, undefined, 'one head per response');
      seen.status = status;
      seen.headers = headerObject(headers);
      seen.bodyLength = bodyLength;
    },
    onBody(chunk) {
      seen.body += chunk.toString('latin1');
    },
    onComplete() {
      seen.complete += 1;
    },
  });
  p.reset(noBody);
  const read = () => ({ ...seen, keepAlive: p.keepAlive, keepAliveMs: p.keepAliveMs });
  return { p, seen, read };
}

/** Parses `text` as given in `pieces` (split points); `close` ends the connection after. */
function parse(text: string, options: { splits?: number[]; noBody?: boolean; close?: boolean } = {}) {
  const { p, read } = parser(options.noBody);
  const bytes = Buffer.from(text, 'latin1');
  let at = 0;
  for (const split of [...(options.splits ?? []), bytes.length]) {
    p.execute(bytes.subarray(at, split));
    at = split;
  }
  if (options.close) p.close();
  return { ...read(), completeFlag: p.complete };
}

/** The same answer parsed whole and split in two at every byte, then byte by byte: one result. */
function parseEverySplit(text: string, options: { noBody?: boolean; close?: boolean } = {}) {
  const whole = parse(text, options);
  for (let split = 1; split < text.length; split++) {
    assert.deepEqual(parse(text, { ...options, splits: [split] }), whole, `split at ${split}`);
  }
  const bytewise = Array.from({ length: text.length - 1 }, (_, i) => i + 1);
  assert.deepEqual(parse(text, { ...options, splits: bytewise }), whole, 'byte by byte');
  return whole;
}

const refuses = (text: string, reason: RegExp, options: { noBody?: boolean } = {}) =>
  assert.throws(
    () => parse(text, options),
    (error: unknown) =>
      error instanceof ResponseError && error.code === 'ORIGIN_BAD_RESPONSE' && reason.test(error.message),
  );

describe('the origin response parser (HTTP/1.1, RFC 9112)', () => {
  it('reads a Content-Length body, whatever the pieces it arrives in', () => {
    const answer = parseEverySplit(
      'HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 11\r\nX-Empty:\r\n\r\n{"id":"é"}\n',
    );
    assert.equal(answer.status, 201);
    assert.deepEqual(answer.headers, {
      'content-type': 'application/json',
      'content-length': '11',
      'x-empty': '',
    });
    assert.equal(answer.body, '{"id":"é"}\n');
    assert.equal(answer.bodyLength, 11);
    assert.equal(answer.complete, 1);
    assert.equal(answer.keepAlive, true);
  });

  it('decodes chunks with extensions and drops trailers, whatever the pieces', () => {
    const answer = parseEverySplit(
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n1;name=value\r\n,\r\nA \r\n the world\r\n0\r\nX-Trailer: 1\r\n\r\n',
    );
    assert.equal(answer.body, 'hello, the world');
    assert.equal(answer.bodyLength, -1);
    assert.equal(answer.complete, 1);
    assert.equal(answer.keepAlive, true);
    assert.deepEqual(answer.headers, { 'transfer-encoding': 'chunked' });
  });

  it('reads a body framed by the close, and then not before', () => {
    const open = parse('HTTP/1.1 200 OK\r\n\r\nuntil the end');
    assert.equal(open.body, 'until the end');
    assert.equal(open.complete, 0);
    assert.equal(open.keepAlive, false);
    const closed = parseEverySplit('HTTP/1.1 200 OK\r\n\r\nuntil the end', { close: true });
    assert.equal(closed.body, 'until the end');
    assert.equal(closed.complete, 1);
    const { p } = parser();
    p.execute(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort'));
    assert.equal(p.close(), false, 'a Content-Length body cut short is not complete');
  });

  it('has no body after HEAD, 204 or 304, whatever the headers announce', () => {
    const head = parse('HTTP/1.1 200 OK\r\nContent-Length: 256\r\n\r\n', { noBody: true });
    assert.deepEqual([head.status, head.body, head.complete, head.keepAlive], [200, '', 1, true]);
    assert.equal(head.headers?.['content-length'], '256', 'the length of what GET would answer, kept');
    assert.equal(head.bodyLength, -1);
    for (const status of [204, 304]) {
      const answer = parse(`HTTP/1.1 ${status} X\r\nTransfer-Encoding: chunked\r\n\r\n`);
      assert.deepEqual([answer.status, answer.body, answer.complete], [status, '', 1]);
    }
    const empty = parse('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
    assert.deepEqual([empty.complete, empty.bodyLength], [1, 0]);
    const twice = parse('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok');
    assert.deepEqual([twice.body, twice.headers], ['ok', { 'content-length': '2' }]);
  });

  it('skips interim 100 and 103 answers and reports the final one', () => {
    const answer = parseEverySplit(
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
    );
    assert.deepEqual([answer.status, answer.body, answer.complete], [200, 'ok', 1]);
    assert.deepEqual(answer.headers, { 'content-length': '2' });
  });

  it('keeps every value of a repeated header, in order', () => {
    const answer = parse(
      'HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nSET-COOKIE: c=3\r\nVary: accept\r\nContent-Length: 0\r\n\r\n',
    );
    assert.deepEqual(answer.headers, {
      'set-cookie': ['a=1', 'b=2', 'c=3'],
      vary: 'accept',
      'content-length': '0',
    });
  });

  it('lets chunked framing win over a Content-Length, and the close frame any other coding', () => {
    const both = parse(
      'HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n',
    );
    assert.deepEqual([both.body, both.complete], ['ok', 1]);
    assert.equal(both.headers?.['content-length'], undefined, 'the void Content-Length is not passed on');
    const gzip = parse('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nbytes', { close: true });
    assert.deepEqual([gzip.body, gzip.complete, gzip.keepAlive], ['bytes', 1, false]);
  });

  it('keeps the connection as HTTP/1.1 and 1.0 say, with the Keep-Alive timeout hint', () => {
    const ok = 'Content-Length: 0\r\n\r\n';
    assert.equal(parse(`HTTP/1.1 200 OK\r\n${ok}`).keepAlive, true);
    assert.equal(parse(`HTTP/1.1 200 OK\r\nConnection: close\r\n${ok}`).keepAlive, false);
    assert.equal(parse(`HTTP/1.1 200 OK\r\nConnection: Upgrade, Close\r\n${ok}`).keepAlive, false);
    assert.equal(parse(`HTTP/1.0 200 OK\r\n${ok}`).keepAlive, false);
    assert.equal(parse(`HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n${ok}`).keepAlive, true);
    const hinted = parse(`HTTP/1.1 200 OK\r\nKeep-Alive: max=100, timeout=5\r\n${ok}`);
    assert.deepEqual([hinted.keepAlive, hinted.keepAliveMs], [true, 5000]);
  });

  it('gives up the connection when the origin sends more than the response', () => {
    const extra = parse('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n');
    assert.deepEqual([extra.body, extra.complete, extra.keepAlive], ['ok', 1, false]);
  });

  it('starts over for the next response on the same connection', () => {
    const { p, read } = parser();
    p.execute(Buffer.from('HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5\r\nContent-Length: 1\r\n\r\na'));
    assert.equal(read().complete, 1);
    assert.equal(p.received, true);
    p.reset(false);
    assert.deepEqual([p.received, p.complete, p.keepAliveMs], [false, false, undefined]);
  });

  it('refuses what is not HTTP/1.1 as the edge accepts it', () => {
    refuses('HTTP/2 200 OK\r\n\r\n', /bad status line/);
    refuses('HTTP/1.1 20 OK\r\n\r\n', /bad status line/);
    refuses('HTTP/1.1 200OK\r\n\r\n', /bad status line/);
    refuses('SSH-2.0-OpenSSH\r\n\r\n', /bad status line/);
    refuses('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n', /101/);
    refuses('HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n', /bad header name/);
    refuses('HTTP/1.1 200 OK\r\n: x\r\n\r\n', /without a name/);
    refuses('HTTP/1.1 200 OK\r\nX-A: 1\r\n folded\r\n\r\n', /without a name|bad header name/);
    refuses('HTTP/1.1 200 OK\r\nX-A: a\x00b\r\n\r\n', /bad value for X-A/);
    refuses('HTTP/1.1 200 OK\r\nX-A: a\nb: c\r\n\r\n', /bad value for X-A/);
    refuses('HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n', /conflicting/);
    refuses('HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n', /bad Content-Length/);
    refuses('HTTP/1.1 200 OK\r\nContent-Length: 1e3\r\n\r\n', /bad Content-Length/);
    refuses('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', /bad chunk size/);
    refuses('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokay\r\n', /longer than its size/);
    refuses('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\nok\r\n', /CRLF/);
    refuses(`HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(70 * 1024)}\r\n\r\n`, /too large/);
    refuses(`HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(70 * 1024)}`, /too large/);
    refuses(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;${'x'.repeat(9000)}`, /too long/);
    refuses(
      `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n${'X-T: 1234567\r\n'.repeat(5000)}`,
      /trailers are too large/,
    );
  });
});
