import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildPlatformApp } from '../../src/main/platform-app.ts';
import { createToken } from '../../src/platform/accounts/credentials.ts';
import { bearerClient } from '../support/api-scenario.ts';
import { testDialects } from '../support/databases.ts';
import { seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';

/**
 * Issue 28: API tokens with an expiry and a read-only scope. A read token reads and changes
 * nothing (403 token_read_only); a token past its expiry answers 401 token_expired; the list shows
 * both. Through the management API, on both databases, the clock moved by hand.
 */
const as = bearerClient;

const readOnlyMessage = (method: string, path: string) =>
  `This API token is read-only: it may only read (GET). To ${method} ${path}, use a token with full scope (create one on the dashboard Account page or with kennel login).`;

for (const dialect of testDialects()) {
  describe(`API token scopes and expiry (${dialect})`, () => {
    let p: TestPlatform;
    let app: FastifyInstance;
    let full: ReturnType<typeof as>;
    let teamId: number;

    before(async () => {
      p = await startPlatformContext(dialect);
      const seeded = await seedTeam(p.ctx);
      teamId = seeded.team.id;
      app = buildPlatformApp(p.ctx);
      await app.ready();
      full = as(app, (await createToken(p.ctx, seeded.owner, 'full')).token);
    });
    after(async () => {
      await app?.close();
      await p?.close();
    });

    it('creates a read token with an expiry, and lists scope and expiry of every token', async () => {
      const created = await full('POST', '/api/v1/tokens', {
        name: 'dashboards',
        scope: 'read',
        expiresInDays: 30,
      });
      assert.equal(created.status, 201);
      assert.equal(created.body.scope, 'read');
      assert.equal(created.body.expiresAt, '2026-12-22T12:00:00.000Z');
      const plain = await full('POST', '/api/v1/tokens', { name: 'ci' });
      assert.equal(plain.status, 201);
      assert.deepEqual([plain.body.scope, plain.body.expiresAt], ['full', null]);
      const list = await full('GET', '/api/v1/tokens');
      assert.equal(list.status, 200);
      assert.deepEqual(
        (list.body as unknown as { name: string; scope: string; expiresAt: string | null }[]).map((t) => [
          t.name,
          t.scope,
          t.expiresAt,
        ]),
        [
          ['full', 'full', null],
          ['dashboards', 'read', '2026-12-22T12:00:00.000Z'],
          ['ci', 'full', null],
        ],
      );
      for (const id of [created.body.id, plain.body.id]) {
        assert.equal((await full('DELETE', `/api/v1/tokens/${id}`)).status, 204);
      }
    });

    it('refuses an expiry outside 1 to 366 days and an unknown scope', async () => {
      for (const body of [
        { name: 'x', expiresInDays: 0 },
        { name: 'x', expiresInDays: 367 },
        { name: 'x', expiresInDays: 1.5 },
        { name: 'x', scope: 'write' },
      ]) {
        const answer = await full('POST', '/api/v1/tokens', body);
        assert.deepEqual([answer.status, answer.body.code], [400, 'validation_failed'], JSON.stringify(body));
      }
    });

    it('lets a read token GET and HEAD, and refuses POST, PUT, PATCH and DELETE with 403 token_read_only', async () => {
      const secret = (await full('POST', '/api/v1/tokens', { name: 'reader', scope: 'read' })).body
        .token as string;
      const reader = as(app, secret);
      const me = await reader('GET', '/api/v1/me');
      assert.deepEqual([me.status, me.body.email], [200, 'owner@x.test']);
      assert.equal((await reader('GET', `/api/v1/teams/${teamId}`)).status, 200);
      const head = await app.inject({
        method: 'HEAD',
        url: '/api/v1/projects',
        headers: { authorization: `Bearer ${secret}` },
      });
      assert.equal(head.statusCode, 200);
      const refusals: [string, string, string, unknown][] = [
        [
          'POST',
          '/api/v1/projects',
          '/api/v1/projects',
          { teamId, slug: 'shop', name: 'Shop', originUrl: 'https://api.example.com' },
        ],
        ['POST', '/api/v1/tokens', '/api/v1/tokens', { name: 'escalate' }],
        [
          'PUT',
          '/api/v1/me/password',
          '/api/v1/me/password',
          { currentPassword: 'owner password 1', newPassword: 'a new password 1' },
        ],
        ['PATCH', `/api/v1/teams/${teamId}`, '/api/v1/teams/{teamId}', { name: 'Taken over' }],
        ['DELETE', '/api/v1/tokens/1', '/api/v1/tokens/{tokenId}', undefined],
      ];
      for (const [method, url, path, body] of refusals) {
        const answer = await reader(method, url, body);
        assert.deepEqual(
          answer.body,
          { code: 'token_read_only', message: readOnlyMessage(method, path), status: 403 },
          `${method} ${url}`,
        );
      }
      // Nothing changed: no project, the team's name, the full token still there.
      assert.deepEqual((await full('GET', '/api/v1/projects')).body, []);
      assert.equal((await full('GET', `/api/v1/teams/${teamId}`)).body.name, 'Shop');
      assert.equal(((await full('GET', '/api/v1/tokens')).body as unknown as unknown[]).length, 2);
    });

    it('answers 401 token_expired once a token is past its expiry, and keeps listing it until revoked', async () => {
      const made = await full('POST', '/api/v1/tokens', { name: 'week', expiresInDays: 7 });
      const week = as(app, made.body.token as string);
      p.clock.advance(7 * 86_400_000 - 1000);
      assert.equal((await week('GET', '/api/v1/me')).status, 200);
      p.clock.advance(1000);
      const expired = await week('GET', '/api/v1/me');
      assert.deepEqual(expired.body, {
        code: 'token_expired',
        message:
          'This API token expired at 2026-11-29T12:00:00.000Z: create a new one (dashboard Account page, POST /api/v1/tokens, or kennel login) and use it instead.',
        status: 401,
      });
      assert.equal(expired.headers['www-authenticate'], 'Bearer realm="kennel", error="invalid_token"');
      assert.equal(
        (await week('POST', '/api/v1/tokens', { name: 'renew myself' })).body.code,
        'token_expired',
      );
      const listed = (await full('GET', '/api/v1/tokens')).body as unknown as {
        name: string;
        expiresAt: string;
      }[];
      assert.deepEqual(
        listed.filter((t) => t.name === 'week').map((t) => t.expiresAt),
        ['2026-11-29T12:00:00.000Z'],
      );
      assert.equal((await full('DELETE', `/api/v1/tokens/${made.body.id}`)).status, 204);
      assert.equal((await week('GET', '/api/v1/me')).body.code, 'unauthenticated');
    });

    it('keeps tokens made before migration 0014 working: full scope, no expiry', async () => {
      // A row as the code before 0014 wrote it: no scope, no expiry.
      const owner = await p.ctx.db
        .selectFrom('users')
        .select('id')
        .where('email', '=', 'owner@x.test')
        .executeTakeFirstOrThrow();
      await p.ctx.db
        .insertInto('api_tokens')
        .values({
          user_id: owner.id,
          name: 'older',
          token_hash: 'e7f0c3f0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c',
          prefix: 'knl_older',
          created_at: '2026-01-01T00:00:00.000Z',
        })
        .execute();
      const listed = (await full('GET', '/api/v1/tokens')).body as unknown as Record<string, unknown>[];
      assert.deepEqual(
        listed.filter((t) => t.name === 'older').map((t) => [t.scope, t.expiresAt]),
        [['full', null]],
      );
    });
  });
}
