import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { open, type SealingKey, seal, sealedWith } from '../../src/lib/sealed-box.ts';
import { CertificateStore } from '../../src/platform/certificates/certificate-store.ts';
import { createInternalCa, InternalIssuer } from '../../src/platform/certificates/internal-issuer.ts';
import { resealSecrets } from '../../src/platform/certificates/reseal-secrets.ts';
import { testDialects } from '../support/databases.ts';
import { seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';

const key = (id: string): SealingKey => ({ id, key: randomBytes(32) });

for (const dialect of testDialects()) {
  describe(`rotating CERT_KEYS: every secret re-sealed under the first key (${dialect})`, () => {
    let p: TestPlatform;
    const k1 = key('k1');
    const k2 = key('k2');

    /** The key id of every sealed value in the database, by what it is. */
    async function sealedUnder(): Promise<Record<string, string | undefined>> {
      const result: Record<string, string | undefined> = {};
      for (const row of await p.ctx.db
        .selectFrom('certificates')
        .select(['hostname', 'key_sealed'])
        .execute())
        result[`certificate ${row.hostname}`] = sealedWith(row.key_sealed);
      for (const row of await p.ctx.db
        .selectFrom('webhook_endpoints')
        .select(['team_id', 'secret_sealed'])
        .execute())
        result[`webhook secret of team ${row.team_id}`] = sealedWith(row.secret_sealed);
      for (const row of await p.ctx.db.selectFrom('platform_keys').select(['name', 'value']).execute()) {
        const value = row.value.startsWith('{')
          ? (JSON.parse(row.value) as { keySealed: string }).keySealed
          : row.value;
        result[row.name] = sealedWith(value);
      }
      return result;
    }

    before(async () => {
      p = await startPlatformContext(dialect);
    });
    after(async () => {
      await p?.close();
    });

    it('re-seals certificate keys, webhook secrets, the ACME account key, ticket keys and the internal CA; nothing then needs k1', async () => {
      const now = p.clock.now();
      const old = new CertificateStore(p.ctx.db, [k1]);
      const ca = await old.internalCa(now);
      const issued = await new InternalIssuer(await createInternalCa('Test CA', now)).issue(
        'shop.example.test',
      );
      await old.save('shop.example.test', issued, now);
      await old.saveSecret('acme_account_key', 'account key pem', now);
      const tickets = await old.ticketKeys(now);
      const { team } = await seedTeam(p.ctx);
      const webhookSecret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
      await p.ctx.db
        .insertInto('webhook_endpoints')
        .values({
          team_id: team.id,
          url: 'https://hooks.example.test/kennel',
          secret_sealed: seal(webhookSecret, k1),
          created_at: now.toISOString(),
          updated_at: now.toISOString(),
        })
        .execute();
      const teamSecret = `webhook secret of team ${team.id}`;
      assert.deepEqual(await sealedUnder(), {
        [teamSecret]: 'k1',
        'certificate shop.example.test': 'k1',
        internal_ca: 'k1',
        acme_account_key: 'k1',
        tls_ticket_keys: 'k1',
      });

      // Step 2 of a rotation: k2 first (it seals), k1 still configured (it opens).
      const report = await resealSecrets(p.ctx.db, [k2, k1]);
      assert.deepEqual(report, { resealed: 5, before: { k1: 5 } });
      assert.deepEqual(await sealedUnder(), {
        [teamSecret]: 'k2',
        'certificate shop.example.test': 'k2',
        internal_ca: 'k2',
        acme_account_key: 'k2',
        tls_ticket_keys: 'k2',
      });

      // Step 3: k1 is gone and everything still opens.
      const rotated = new CertificateStore(p.ctx.db, [k2]);
      assert.equal((await rotated.load('shop.example.test'))?.privateKeyPem, issued.privateKeyPem);
      assert.equal(await rotated.secret('acme_account_key'), 'account key pem');
      assert.deepEqual(await rotated.ticketKeys(now), tickets);
      assert.deepEqual(await rotated.internalCa(now), ca);
      const endpoint = await p.ctx.db
        .selectFrom('webhook_endpoints')
        .select('secret_sealed')
        .executeTakeFirstOrThrow();
      assert.equal(open(endpoint.secret_sealed, [k2]), webhookSecret);

      // Idempotent: a second start re-seals nothing.
      assert.deepEqual(await resealSecrets(p.ctx.db, [k2]), { resealed: 0, before: { k2: 5 } });
    });

    it('refuses, naming the key, when a secret is sealed under a key that is not configured', async () => {
      await assert.rejects(
        resealSecrets(p.ctx.db, [key('k3')]),
        /sealed with key "k2", which this process does not have/,
      );
      assert.equal((await sealedUnder()).acme_account_key, 'k2', 'nothing was changed');
    });
  });
}
