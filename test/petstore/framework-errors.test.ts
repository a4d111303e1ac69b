import assert from 'node:assert/strict';
import { type AddressInfo, connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { BODY_LIMIT_BYTES, petstoreErrors } from '../../src/petstore/index.ts';
import { testDialects } from '../support/databases.ts';
import { type RawAnswer, rawRequest } from '../support/http.ts';
import { startPetstore, TEST_LIMITS, type TestPetstore } from '../support/petstore.ts';

/**
 * Failures Fastify and node:http answer before any operation runs get the Error body and a
 * catalog code like every other answer. Real connections: inject bypasses node:http's parser.
 */
function assertError(answer: RawAnswer, status: number, code: string, message?: RegExp): void {
  assert.equal(answer.status, status, answer.body);
  assert.match(answer.headers['content-type'] ?? '', /^application\/json/);
  const body = JSON.parse(answer.body) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body).sort(), ['code', 'message', 'status']);
  assert.equal(body.code, code);
  assert.equal(body.status, status);
  assert.equal(petstoreErrors.specs[code as keyof typeof petstoreErrors.specs]?.status, status);
  if (message) assert.match(body.message as string, message);
  assert.match(answer.headers['x-request-id'] ?? '', /^[\w.:-]+$/);
  assert.equal(answer.names.filter((n) => n === 'x-request-id').length, 1);
}

for (const dialect of testDialects()) {
  describe(`Petstore framework-level failures (${dialect})`, () => {
    let ps: TestPetstore;
    let port: number;
    let auth: string;
    before(async () => {
      ps = await startPetstore(dialect, {
        limits: { ...TEST_LIMITS, headersTimeoutMs: 300, receiveTimeoutMs: 400 },
      });
      await ps.listen();
      port = (ps.app.server.address() as AddressInfo).port;
      auth = `Authorization: Bearer ${ps.adminKey}\r\n`;
    });
    after(() => ps.close());

    it('a malformed percent-escape in the path is 400 malformed_url', async () => {
      const answer = await rawRequest(port, 'GET /pets/%E0%A4%A HTTP/1.1\r\nHost: x\r\n\r\n', {
        waitMs: 50,
      });
      assertError(answer, 400, 'malformed_url', /percent-escape/);
    });

    it('a path parameter over 100 characters is 414 path_too_long', async () => {
      const answer = await rawRequest(port, `GET /pets/${'1'.repeat(101)} HTTP/1.1\r\nHost: x\r\n\r\n`, {
        waitMs: 50,
      });
      assertError(answer, 414, 'path_too_long', /longer than 100 characters/);
      // 100 characters is still a parameter (then a validation error, not 414).
      const at = await rawRequest(port, `GET /pets/${'1'.repeat(100)} HTTP/1.1\r\nHost: x\r\n\r\n`, {
        waitMs: 50,
      });
      assert.equal(at.status, 400);
    });

    it('headers over 16 KB, or a 100 KB URL, are 431 headers_too_large and the connection closes', async () => {
      const big = await rawRequest(
        port,
        `GET /pets HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17_000)}\r\n\r\n`,
      );
      assertError(big, 431, 'headers_too_large', /16 KB/);
      assert.equal(big.closed, true);
      const url = await rawRequest(port, `GET /pets?q=${'a'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
      assertError(url, 431, 'headers_too_large');
    });

    it('a whole body that is not JSON is 400 malformed_json and the connection stays open for the next request', async () => {
      const socket = connect(port, '127.0.0.1');
      after(() => socket.destroy());
      socket.setEncoding('latin1');
      let text = '';
      let closed = false;
      socket.on('data', (chunk: string) => {
        text += chunk;
      });
      socket.on('close', () => {
        closed = true;
      });
      const answered = async (count: number) => {
        for (
          let waited = 0;
          (text.match(/HTTP\/1\.1 /g) ?? []).length < count && waited < 5_000;
          waited += 10
        ) {
          await sleep(10);
        }
        await sleep(50);
      };
      const bad = '{"petId":,"quantity":1}';
      socket.write(
        `POST /store/orders HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: ${bad.length}\r\n\r\n${bad}`,
      );
      await answered(1);
      const [head = ''] = text.split('\r\n\r\n');
      assert.match(head, /^HTTP\/1\.1 400 /);
      assert.doesNotMatch(head, /\r\nconnection: close\r\n/i);
      assert.match(text, /"code":"malformed_json"/);
      assert.equal(closed, false, 'the server kept the connection');

      text = '';
      socket.write('GET /pets/999999 HTTP/1.1\r\nHost: x\r\n\r\n');
      await answered(1);
      assert.match(text, /^HTTP\/1\.1 404 /);
      assert.match(text, /"code":"pet_not_found"/);
    });

    it('a body over the limit is 413 body_too_large and the connection closes (the rest of it is not read)', async () => {
      const big = `{"name":"${'x'.repeat(BODY_LIMIT_BYTES)}"}`;
      const answer = await rawRequest(
        port,
        `POST /categories HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: ${big.length}\r\n\r\n${big}`,
        { waitMs: 200 },
      );
      assertError(answer, 413, 'body_too_large');
      assert.equal(answer.headers.connection, 'close');
    });

    it('a broken chunked body is 400 malformed_request with the request id, and the connection closes', async () => {
      const answer = await rawRequest(
        port,
        `POST /categories HTTP/1.1\r\nHost: x\r\n${auth}X-Request-Id: chunky-1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
      );
      assertError(answer, 400, 'malformed_request', /not valid HTTP\/1\.1/);
      assert.equal(answer.headers['x-request-id'], 'chunky-1');
      assert.equal(answer.closed, true);
    });

    it('a body shorter than its Content-Length, then the end of the connection, is 400 malformed_request', async () => {
      const answer = await rawRequest(
        port,
        `POST /categories HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":"ab"`,
        { end: true },
      );
      assertError(answer, 400, 'malformed_request', /shorter than its Content-Length/);
      const listed = await ps.request<unknown[]>('GET', '/categories');
      assert.deepEqual(listed.body, [], 'nothing was created');
    });

    it('a body that stalls is 408 receive_timeout after the deadline, and the connection closes', async () => {
      const answer = await rawRequest(
        port,
        `POST /categories HTTP/1.1\r\nHost: x\r\n${auth}X-Request-Id: stalled-1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":"ab"`,
        { timeoutMs: 3000 },
      );
      assertError(answer, 408, 'receive_timeout', /body did not arrive within 0\.4 s/);
      assert.equal(answer.headers['x-request-id'], 'stalled-1');
      assert.equal(answer.closed, true);
      assert.ok(answer.ms >= 380 && answer.ms < 2000, `answered after ${answer.ms} ms`);
    });

    it('headers that stall are 408 receive_timeout after the headers deadline', async () => {
      const answer = await rawRequest(port, 'GET /pets HTTP/1.1\r\nHost: x\r\n', { timeoutMs: 3000 });
      assertError(answer, 408, 'receive_timeout', /headers did not arrive within 0\.3 s/);
      assert.equal(answer.closed, true);
      assert.ok(answer.ms >= 280 && answer.ms < 2000, `answered after ${answer.ms} ms`);
    });

    it('a whole request in time is answered as usual on a kept-alive connection', async () => {
      const answer = await rawRequest(port, 'GET /pets HTTP/1.1\r\nHost: x\r\n\r\n', { waitMs: 100 });
      assert.equal(answer.status, 200);
      assert.equal(answer.closed, false);
      assert.equal(answer.names.filter((n) => n === 'x-request-id').length, 1);
    });

    it('the content-type and body errors answer with their catalog codes', async () => {
      const post = (headers: string, body: string) =>
        rawRequest(
          port,
          `POST /categories HTTP/1.1\r\nHost: x\r\n${auth}${headers}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
          {
            waitMs: 100,
          },
        );
      assertError(await post('Content-Type: text/plain\r\n', 'name'), 415, 'unsupported_media_type');
      assertError(await post('Content-Type: application/json\r\n', ''), 400, 'malformed_json', /empty/);
      assertError(await post('Content-Type: application/json\r\n', '{"name":'), 400, 'malformed_json');
      assertError(
        await post('Content-Type: application/json\r\n', `{"name":"${'a'.repeat(1_100_000)}"}`),
        413,
        'body_too_large',
      );
    });
  });
}

describe('Petstore shutting down', () => {
  it('a request that arrives while the server stops is 503 shutting_down with the Error body', async () => {
    const [dialect] = testDialects();
    const ps = await startPetstore(dialect ?? 'sqlite');
    await ps.listen();
    const port = (ps.app.server.address() as AddressInfo).port;
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    const closed = new Promise((done) => socket.on('close', done));
    // Headers begun: the connection is not idle, so closing waits for this request.
    socket.write('GET /pets HTTP/1.1\r\nHost: x\r\nX-Request-Id: late-1\r\n');
    await sleep(50);
    const closing = ps.app.close();
    await sleep(50);
    socket.write('\r\n');
    await closed;
    await closing;
    await ps.database.close();
    await ps.storage.drop();
    const [head = '', body = ''] = text.split('\r\n\r\n');
    assert.match(head, /^HTTP\/1\.1 503 /);
    assert.match(head, /\r\nconnection: close\r\n/i);
    assert.match(head, /\r\nretry-after: 1\r\n/i);
    assert.match(head, /\r\nx-request-id: late-1\r\n/i);
    const error = JSON.parse(body) as Record<string, unknown>;
    assert.equal(error.code, 'shutting_down');
    assert.equal(error.status, 503);
  });
});
