import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/lib/clock.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import { testDialects } from '../support/databases.ts';
import { startTestNode, type TestNode } from '../support/test-node.ts';
import { kennelProcess as kennel, tempDir, USERS } from './harness.ts';

/**
 * Over HTTPS the platform names its session cookie `__Host-kennel_session`: `kennel login`, which
 * signs in with the cookie only to create its API token, must pick that name up too.
 */
for (const dialect of testDialects()) {
  describe(`kennel login over HTTPS (${dialect})`, () => {
    let node: TestNode;
    let url: string;
    const dir = tempDir();

    before(async () => {
      // A node whose platform domain is localhost: its edge serves the app over TLS with an
      // internal-CA certificate for localhost, the root of which the CLI is given to trust.
      node = await startTestNode(dialect, {
        env: { PLATFORM_DOMAIN: 'localhost' },
        clock: new ManualClock(Date.now()),
      });
      await createUser(node.ctx, USERS.owner);
      url = `https://localhost:${node.httpsPort}`;
    });
    after(async () => {
      await node?.stop();
      dir.remove();
    });

    it('signs in with the __Host- cookie, saves a token and ends the session', async () => {
      const result = await kennel(['login', '--email', USERS.owner.email, '--password-stdin'], {
        env: {
          KENNEL_URL: url,
          KENNEL_CONFIG_DIR: dir.path,
          NODE_EXTRA_CA_CERTS: node.node.rootPemFile,
        },
        input: `${USERS.owner.password}\n`,
      });
      assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
      assert.match(result.stdout, /Signed in to https:\/\/localhost:\d+ as owner@x\.test/);
      const saved = JSON.parse(readFileSync(join(dir.path, 'credentials.json'), 'utf8')) as { token: string };
      assert.match(saved.token, /^knl_/);
      // The cookie session only served to create the token, and was ended.
      const sessions = await node.ctx.db.selectFrom('sessions').select('id_hash').execute();
      assert.deepEqual(sessions, []);
    });
  });
}
