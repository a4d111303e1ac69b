import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testDialects } from '../support/databases.ts';
import { startPetstore, type TestPetstore } from '../support/petstore.ts';
import { type CliResult, kennel } from './harness.ts';

function show(result: CliResult): string {
  return `exit ${result.code}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}

/** `kennel keys create|list|revoke` as a user runs them, against a real Petstore over HTTP. */
for (const dialect of testDialects()) {
  describe(`kennel keys against the Petstore (${dialect})`, () => {
    let ps: TestPetstore;
    let url: string;
    const asAdmin = (args: string[], env: Record<string, string> = {}) =>
      kennel(['keys', ...args], { env: { PETSTORE_URL: url, PETSTORE_API_KEY: ps.adminKey, ...env } });
    before(async () => {
      ps = await startPetstore(dialect);
      url = await ps.listen();
    });
    after(() => ps.close());

    it('creates a key shown once, which then works with exactly its scopes', async () => {
      const created = await asAdmin(['create', '--scope', 'pets:write', '--name', 'shop front']);
      assert.equal(created.code, 0, show(created));
      const secret = /^ {2}(pk_[A-Za-z0-9_-]{43})$/m.exec(created.stdout)?.[1];
      assert.ok(secret, show(created));
      assert.match(created.stdout, /^Created key \d+ \(shop front\) with pets:write:$/m);
      assert.match(created.stdout, /only time it is shown/);
      const auth = { authorization: `Bearer ${secret}` };
      assert.equal((await ps.request('POST', '/categories', { name: 'CLI' }, auth)).status, 201);
      assert.equal((await ps.request('GET', '/store/orders', undefined, auth)).status, 403);

      const listed = await asAdmin(['list']);
      assert.equal(listed.code, 0, show(listed));
      assert.match(listed.stdout, /^ID\s+Name\s+Prefix\s+Scopes\s+Created\s+Revoked$/m);
      assert.match(listed.stdout, new RegExp(`shop front\\s+${secret.slice(0, 11)}…\\s+pets:write`));
      assert.ok(!listed.stdout.includes(secret), 'lists never show secrets');
    });

    it('--json prints the API answers; revoke stops the key at once', async () => {
      const created = await asAdmin(['create', '--scope', 'store,pets:write', '--json']);
      assert.equal(created.code, 0, show(created));
      const key = JSON.parse(created.stdout) as {
        id: number;
        secret: string;
        scopes: string[];
        name: string;
      };
      assert.deepEqual(key.scopes, ['pets:write', 'store']);
      assert.equal(key.name, 'store pets:write');
      const list = JSON.parse((await asAdmin(['list', '--json'])).stdout) as { id: number }[];
      assert.ok(list.some((k) => k.id === key.id));

      const revoked = await asAdmin(['revoke', String(key.id)]);
      assert.equal(revoked.code, 0, show(revoked));
      assert.match(
        revoked.stdout,
        new RegExp(`^Revoked key ${key.id} \\(store pets:write, pk_.{8}…\\)\\.$`, 'm'),
      );
      const refused = await ps.request('GET', '/store/orders', undefined, {
        authorization: `Bearer ${key.secret}`,
      });
      assert.equal(refused.status, 401);
      const missing = await asAdmin(['revoke', '99999']);
      assert.equal(missing.code, 1, show(missing));
      assert.match(missing.stderr, /No API key has id 99999.*\(key_not_found\)/);
    });

    it('exits 3 without a key or with a revoked one, 1 without the admin scope, 2 on bad usage', async () => {
      const none = await kennel(['keys', 'list'], { env: { PETSTORE_URL: url } });
      assert.equal(none.code, 3, show(none));
      assert.match(none.stderr, /No Petstore API key: pass --key or set PETSTORE_API_KEY/);
      const bogus = await asAdmin(['list', '--key', `pk_${'z'.repeat(43)}`]);
      assert.equal(bogus.code, 3, show(bogus));
      assert.match(bogus.stderr, /\(unauthenticated\)/);
      const store = await asAdmin(['create', '--scope', 'store', '--json']);
      const storeKey = (JSON.parse(store.stdout) as { secret: string }).secret;
      const forbidden = await asAdmin(['list'], { PETSTORE_API_KEY: storeKey });
      assert.equal(forbidden.code, 1, show(forbidden));
      assert.match(forbidden.stderr, /needs the scope admin.*\(forbidden\)/);
      const unknownScope = await asAdmin(['create', '--scope', 'pets:read']);
      assert.equal(unknownScope.code, 2, show(unknownScope));
      assert.match(unknownScope.stderr, /Unknown scope pets:read: use pets:write, store, admin\./);
      const noScope = await asAdmin(['create']);
      assert.equal(noScope.code, 2, show(noScope));
      const badId = await asAdmin(['revoke', 'abc']);
      assert.equal(badId.code, 2, show(badId));
      const down = await kennel(['keys', 'list', '--url', 'http://127.0.0.1:9', '--key', ps.adminKey]);
      assert.equal(down.code, 4, show(down));
    });

    it('--help describes the commands', async () => {
      const help = await kennel(['keys', 'create', '--help']);
      assert.equal(help.code, 0, show(help));
      assert.match(help.stdout, /--scope SCOPES/);
      assert.match(help.stdout, /--url URL/);
      assert.match(help.stdout, /PETSTORE_API_KEY/);
    });
  });
}
