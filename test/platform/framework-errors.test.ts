import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildPlatformApp } from '../../src/main/platform-app.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import { platformErrors } from '../../src/platform/errors.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import { type RawAnswer, rawRequest } from '../support/http.ts';
import { startPlatformContext, type TestPlatform } from '../support/platform.ts';

/**
 * The management API answers framework-level failures (node:http's parser, Fastify's router)
 * and inputs the databases would treat differently with the Error body and its catalog codes.
 */
function assertError(answer: RawAnswer, status: number, code: string, message?: RegExp): void {
  assert.equal(answer.status, status, answer.body);
  const body = JSON.parse(answer.body) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body).sort(), ['code', 'message', 'status']);
  assert.equal(body.code, code);
  assert.equal(body.status, status);
  assert.equal(platformErrors.specs[code as keyof typeof platformErrors.specs]?.status, status);
  if (message) assert.match(body.message as string, message);
  assert.equal(answer.names.filter((n) => n === 'x-request-id').length, 1);
}

for (const dialect of testDialects()) {
  describe(`management API framework-level failures and strict inputs (${dialect})`, () => {
    let p: TestPlatform;
    let app: FastifyInstance;
    let port: number;
    let auth: string;
    let teamId: number;
    before(async () => {
      p = await startPlatformContext(dialect, {
        HEADERS_TIMEOUT: '300ms',
        RECEIVE_TIMEOUT: '400ms',
        KENNEL_ORIGIN_ALLOWLIST: 'http://127.0.0.1:4010',
      });
      app = buildPlatformApp(p.ctx);
      await app.listen({ port: 0, host: '127.0.0.1' });
      port = (app.server.address() as AddressInfo).port;
      await createUser(p.ctx, { email: 'owner@x.test', password: 'owner password 1' });
      const signIn = await app.inject({
        method: 'POST',
        url: '/api/v1/session',
        payload: { email: 'owner@x.test', password: 'owner password 1' },
      });
      const cookie = String(signIn.headers['set-cookie']).split(';')[0] ?? '';
      const token = await app.inject({
        method: 'POST',
        url: '/api/v1/tokens',
        headers: { cookie, 'x-csrf-token': String(signIn.json().csrfToken) },
        payload: { name: 'tests' },
      });
      auth = `Bearer ${String(token.json().token)}`;
      teamId = Number(
        (
          await app.inject({
            method: 'POST',
            url: '/api/v1/teams',
            headers: { authorization: auth },
            payload: { name: 'Shop' },
          })
        ).json().id,
      );
    });
    after(() => closeAll(app, p));

    it('answers bad escapes, long parameters, big headers and broken framing with its codes', async () => {
      assertError(
        await rawRequest(port, 'GET /api/v1/projects/%E0%A4%A HTTP/1.1\r\nHost: x\r\n\r\n', { waitMs: 50 }),
        400,
        'malformed_url',
      );
      assertError(
        await rawRequest(port, `GET /api/v1/projects/${'a'.repeat(101)} HTTP/1.1\r\nHost: x\r\n\r\n`, {
          waitMs: 50,
        }),
        414,
        'path_too_long',
      );
      assertError(
        await rawRequest(port, `GET /api/v1/me HTTP/1.1\r\nHost: x\r\nCookie: ${'a'.repeat(17_000)}\r\n\r\n`),
        431,
        'headers_too_large',
      );
      const chunked = await rawRequest(
        port,
        `POST /api/v1/teams HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\n`,
      );
      assertError(chunked, 400, 'malformed_request');
      assert.equal(chunked.closed, true);
    });

    it('a body that stalls is 408 receive_timeout after RECEIVE_TIMEOUT, and the connection closes', async () => {
      const answer = await rawRequest(
        port,
        `POST /api/v1/teams HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":"ab"`,
        { timeoutMs: 3000 },
      );
      assertError(answer, 408, 'receive_timeout', /within 0\.4 s/);
      assert.equal(answer.closed, true);
      assert.ok(answer.ms >= 380 && answer.ms < 2000, `answered after ${answer.ms} ms`);
    });

    it('U+0000 in a project name is 422 invalid_character, and no project is made', async () => {
      const created = await app.inject({
        method: 'POST',
        url: '/api/v1/projects',
        headers: { authorization: auth },
        payload: { teamId, slug: 'shop', name: 'Sh\u0000op', originUrl: 'http://127.0.0.1:4010' },
      });
      assert.equal(created.statusCode, 422, created.body);
      assert.deepEqual(created.json(), {
        code: 'invalid_character',
        message:
          'The field body.name contains the character U+0000 (NUL), which no text field can hold. Remove it.',
        status: 422,
      });
      const slug = await app.inject({
        method: 'GET',
        url: '/api/v1/projects/sh%00op',
        headers: { authorization: auth },
      });
      assert.equal(slug.statusCode, 422);
      const listed = await app.inject({
        method: 'GET',
        url: '/api/v1/projects',
        headers: { authorization: auth },
      });
      assert.deepEqual(listed.json(), []);
    });

    it('ids in paths are plain decimals, and every answer carries one X-Request-Id', async () => {
      for (const id of ['0x1', '1e0', '+1', '1.0']) {
        const answer = await app.inject({
          method: 'DELETE',
          url: `/api/v1/tokens/${id}`,
          headers: { authorization: auth },
        });
        assert.equal(answer.statusCode, 400, id);
        assert.equal(answer.json().code, 'validation_failed');
      }
      const me = await app.inject({
        method: 'GET',
        url: '/api/v1/me',
        headers: { authorization: auth, 'x-request-id': 'trace-7' },
      });
      assert.equal(me.statusCode, 200);
      assert.equal(me.headers['x-request-id'], 'trace-7');
      const document = await rawRequest(port, 'GET /api/v1/openapi.json HTTP/1.1\r\nHost: x\r\n\r\n', {
        waitMs: 50,
      });
      assert.equal(document.status, 200);
      assert.equal(document.names.filter((n) => n === 'x-request-id').length, 1);
    });
  });
}
