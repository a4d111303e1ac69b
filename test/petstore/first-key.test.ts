import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { testDialects } from '../support/databases.ts';
import { callPetstore } from '../support/petstore.ts';
import { NODE, processSuite, startProcess, storageEnv } from '../support/processes.ts';

const KEY_TEXT = /pk_[A-Za-z0-9_-]{43}/g;

const call = (url: string, method: string, path: string, key: string, body?: unknown) =>
  callPetstore<Record<string, unknown> | undefined>(url, key, method, path, body);

/**
 * The first admin key, as an operator meets it: printed once at the first start (never in a log
 * line), or taken from PETSTORE_ADMIN_KEY; keys created later never reach the output.
 */
for (const dialect of testDialects()) {
  describe(`the Petstore's first admin key (${dialect})`, () => {
    const suite = processSuite(dialect);

    it('is printed once at the first start, works with every scope, and no key is ever logged', async () => {
      suite.server = await startProcess('petstore.ts', storageEnv(suite.storage.location));
      // The banner comes before the "listening" log line startProcess waits for.
      const printed = suite.server.output().match(KEY_TEXT) ?? [];
      assert.equal(printed.length, 1, suite.server.output());
      const admin = printed[0] as string;
      assert.match(
        suite.server.output(),
        /first admin API key \(every scope; shown this once, stored only as a hash\)/,
      );
      const created = await call(suite.server.url, 'POST', '/keys', admin, {
        name: 'later',
        scopes: ['store'],
      });
      assert.equal(created.status, 201);
      const secret = created.body?.secret as string;
      assert.equal((await call(suite.server.url, 'GET', '/store/orders', secret)).status, 200);
      assert.equal(
        (await call(suite.server.url, 'GET', '/store/orders', `${secret.slice(0, -1)}x`)).status,
        401,
      );
      assert.equal((await call(suite.server.url, 'DELETE', `/keys/${created.body?.id}`, admin)).status, 200);
      await suite.server.stop('SIGTERM');
      const output = suite.server.output();
      assert.ok(!output.includes(secret), 'a created key is never written out');
      for (const line of output.split('\n').filter((l) => l.startsWith('{'))) {
        assert.ok(!line.includes(admin), `a log line shows the admin key: ${line}`);
      }

      suite.server = await startProcess('petstore.ts', storageEnv(suite.storage.location));
      assert.equal(suite.server.output().match(KEY_TEXT), null, 'no new key at later starts');
      assert.equal((await call(suite.server.url, 'GET', '/keys', admin)).status, 200);
      await suite.server.stop('SIGTERM');
      suite.server = undefined;
    });

    it('takes PETSTORE_ADMIN_KEY instead, and refuses a malformed one', async () => {
      const chosen = `pk_${'c'.repeat(43)}`;
      suite.server = await startProcess('petstore.ts', {
        ...storageEnv(suite.storage.location),
        PETSTORE_ADMIN_KEY: chosen,
      });
      assert.equal(suite.server.output().match(KEY_TEXT), null);
      const keys = await call(suite.server.url, 'GET', '/keys', chosen);
      assert.equal(keys.status, 200);
      await suite.server.stop('SIGTERM');
      suite.server = undefined;

      const bad = spawnSync(NODE, [join(import.meta.dirname, '..', '..', 'src', 'main', 'petstore.ts')], {
        env: {
          PATH: process.env.PATH ?? '',
          ...storageEnv(suite.storage.location),
          PETSTORE_ADMIN_KEY: 'secret',
        },
        encoding: 'utf8',
        timeout: 15_000,
      });
      assert.equal(bad.status, 2);
      assert.match(
        bad.stderr,
        /PETSTORE_ADMIN_KEY="secret" is not valid: expected pk_ followed by 43 base64url characters/,
      );
      assert.ok(!bad.stdout.includes('secret') && !bad.stderr.includes('c'.repeat(43)));
    });
  });
}
