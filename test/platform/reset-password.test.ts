import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  actorForToken,
  createSession,
  createToken,
  sessionFor,
} from '../../src/platform/accounts/credentials.ts';
import { authenticate, createUser } from '../../src/platform/accounts/users.ts';
import { type PlatformTables, platformMigrations } from '../../src/platform/db-schema.ts';
import { migrateToLatest, openDatabase } from '../../src/storage/index.ts';
import { createTestStorage, testDialects } from '../support/databases.ts';
import { startPlatformContext } from '../support/platform.ts';
import { processStorage, runToExit, startProcess, storageEnv } from '../support/processes.ts';

/** Runs `npm run reset-password -- <args>` against a storage. */
async function resetPassword(env: Record<string, string>, ...args: string[]) {
  const result = await runToExit('reset-password.ts', args, env);
  return { ...result, password: /^ {2}(\S+)$/m.exec(result.stdout)?.[1] };
}

for (const dialect of testDialects()) {
  describe(`npm run reset-password (${dialect})`, () => {
    it('with the platform stopped: sets a new random password, printed once, signs out every session and revokes every API token', async () => {
      const storage = await createTestStorage(dialect);
      const location = processStorage(storage.location, 'kennel.db');
      let database = openDatabase<PlatformTables>(location);
      try {
        await migrateToLatest(database.db, database.dialect, 'platform', platformMigrations);
        const p = await startPlatformContext(dialect);
        let ctx = { ...p.ctx, db: database.db, dialect: database.dialect };
        await p.close();
        const admin = await createUser(ctx, {
          email: 'ops@x.test',
          password: 'forgotten password',
          isAdmin: true,
        });
        const session = await createSession(ctx, admin);
        // A token made before the reset (by whoever held the account) must not outlive it.
        const token = await createToken(ctx, admin, 'made before the reset');
        const env = storageEnv(storage.location);
        // Stopped: no other connection has the database open.
        await database.close();

        const unknown = await resetPassword(env, 'nobody@x.test');
        assert.deepEqual(
          [unknown.code, unknown.stderr],
          [1, 'No account uses nobody@x.test. Platform admins: ops@x.test.\n'],
        );
        assert.deepEqual((await resetPassword(env)).code, 2);

        const run = await resetPassword(env, '--', ' OPS@x.test ');
        assert.equal(run.code, 0, run.stderr);
        assert.match(run.password ?? '', /^[\w-]{24}$/);
        assert.equal(
          run.stdout,
          `New password for ops@x.test (shown this once; not stored in clear):\n  ${run.password}\nSigned out 1 session(s) and revoked 1 API token(s) of this account: make new tokens where they were used.\n`,
        );
        database = openDatabase<PlatformTables>(location);
        ctx = { ...ctx, db: database.db };
        assert.equal((await authenticate(ctx, 'ops@x.test', run.password as string)).userId, admin.userId);
        await assert.rejects(authenticate(ctx, 'ops@x.test', 'forgotten password'), {
          code: 'invalid_credentials',
        });
        assert.equal(await sessionFor(ctx, session.cookie), undefined, 'signed out');
        assert.equal(await actorForToken(ctx, token.token), undefined, 'the token is revoked');
      } finally {
        await database.close();
        await storage.drop();
      }
    });

    it('with the platform running: the new password signs in at once and the old session is gone', async () => {
      const storage = await createTestStorage(dialect);
      const server = await startProcess('platform.ts', {
        ...storageEnv(storage.location),
        HTTP_PORT: '0',
        HTTPS_PORT: '0',
        PETSTORE_PORT: '0',
        KENNEL_ADMIN_PASSWORD: 'the first password',
      });
      const base = server.url.replace('127.0.0.1', 'localhost');
      const signIn = (password: string) =>
        fetch(`${base}/api/v1/session`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'admin@localhost', password }),
        });
      try {
        const before = await signIn('the first password');
        assert.equal(before.status, 201);
        const cookie = (before.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
        const run = await resetPassword(storageEnv(storage.location), 'admin@localhost');
        assert.equal(run.code, 0, run.stderr);
        assert.equal((await fetch(`${base}/api/v1/me`, { headers: { cookie } })).status, 401);
        assert.equal((await signIn('the first password')).status, 401);
        assert.equal((await signIn(run.password as string)).status, 201);
      } finally {
        await server.stop('SIGTERM');
        await storage.drop();
      }
    });
  });
}
