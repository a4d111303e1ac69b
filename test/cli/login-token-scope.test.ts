import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../support/databases.ts';
import { type CliResult, type CliServer, kennel, startCliServer, tempDir, USERS } from './harness.ts';

const show = (result: CliResult) =>
  `exit ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;

/**
 * Issue 28: `kennel login --expires-in-days N --read-only` saves a token that expires and only
 * reads; commands that change something are refused with the platform's token_read_only.
 */
for (const dialect of testDialects()) {
  describe(`kennel login with an expiry and the read scope (${dialect})`, () => {
    let server: CliServer;
    const config = tempDir();
    const cli = (args: string[], input?: string) =>
      kennel(args, { env: { KENNEL_URL: server.url, KENNEL_CONFIG_DIR: config.path }, input });

    before(async () => {
      server = await startCliServer(dialect);
    });
    after(async () => {
      await server?.close();
      config.remove();
    });

    it('refuses an expiry outside 1 to 366 days before asking anything', async () => {
      for (const [days, message] of [
        ['0', /^error: --expires-in-days must be a positive whole number \(got "0"\)\.$/m],
        ['367', /^error: --expires-in-days must be from 1 to 366 \(got 367\)\.$/m],
      ] as const) {
        const result = await cli(
          ['login', '--email', USERS.owner.email, '--password-stdin', '--expires-in-days', days],
          `${USERS.owner.password}\n`,
        );
        assert.equal(result.code, 2, show(result));
        assert.match(result.stderr, message);
      }
    });

    it('saves a read-only token that expires; reads work, changes answer token_read_only', async () => {
      const login = await cli(
        [
          'login',
          '--email',
          USERS.owner.email,
          '--password-stdin',
          '--expires-in-days',
          '30',
          '--read-only',
          '--json',
        ],
        `${USERS.owner.password}\n`,
      );
      assert.equal(login.code, 0, show(login));
      const token = (JSON.parse(login.stdout) as { token: { scope: string; expiresAt: string } }).token;
      assert.deepEqual(
        { scope: token.scope, expiresAt: token.expiresAt },
        { scope: 'read', expiresAt: '2026-12-22T12:00:00.000Z' },
      );
      const human = await cli(
        ['login', '--email', USERS.owner.email, '--password-stdin', '--expires-in-days', '7', '--read-only'],
        `${USERS.owner.password}\n`,
      );
      assert.equal(human.code, 0, show(human));
      assert.match(
        human.stdout,
        /\(knl_[\w-]{6}…, read-only, expires 2026-11-29T12:00:00\.000Z\) is saved in /,
      );

      const whoami = await cli(['whoami']);
      assert.equal(whoami.code, 0, show(whoami));
      assert.match(whoami.stdout, /^owner@x\.test\n/);
      const create = await cli(['teams', 'create', 'Nope']);
      assert.notEqual(create.code, 0, show(create));
      assert.match(
        create.stderr,
        /This API token is read-only: it may only read \(GET\)\..*\(token_read_only\)$/m,
      );
      const teams = await server.platform.ctx.db.selectFrom('teams').select('name').execute();
      assert.deepEqual(teams, []);
    });
  });
}
