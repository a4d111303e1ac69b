import { open, type SealingKey, seal, sealedWith } from '../../lib/sealed-box.ts';
import type { PlatformDb } from '../context.ts';

export interface ResealReport {
  /** Values re-sealed under the sealing key (the first of CERT_KEYS). */
  readonly resealed: number;
  /** Values found sealed under each key id before re-sealing (what still needed the old keys). */
  readonly before: Readonly<Record<string, number>>;
}

/**
 * Re-seals every secret in the database (certificate private keys, teams' webhook signing secrets,
 * the ACME account key, the TLS ticket keys, the internal CA's key) that is sealed under any key but the first of `keys`: the
 * second half of a key rotation (docs/operations.md). Each row is replaced only if it still holds
 * the value read (compare-and-set), so a certificate renewed meanwhile by another node is left as
 * that node wrote it. Idempotent; a value sealed under a key not in `keys` fails loudly, naming it.
 */
export async function resealSecrets(db: PlatformDb, keys: readonly SealingKey[]): Promise<ResealReport> {
  const current = keys[0];
  if (!current) throw new Error('resealSecrets needs at least one sealing key');
  const before: Record<string, number> = {};
  const count = (sealed: string) => {
    const id = sealedWith(sealed);
    if (id !== undefined) before[id] = (before[id] ?? 0) + 1;
    return id;
  };
  const reseal = (sealed: string) => seal(open(sealed, keys), current);
  let resealed = 0;

  const certificates = await db.selectFrom('certificates').select(['hostname', 'key_sealed']).execute();
  for (const row of certificates) {
    if (count(row.key_sealed) === current.id) continue;
    const result = await db
      .updateTable('certificates')
      .set({ key_sealed: reseal(row.key_sealed) })
      .where('hostname', '=', row.hostname)
      .where('key_sealed', '=', row.key_sealed)
      .executeTakeFirst();
    resealed += Number(result.numUpdatedRows);
  }

  const endpoints = await db.selectFrom('webhook_endpoints').select(['team_id', 'secret_sealed']).execute();
  for (const row of endpoints) {
    if (count(row.secret_sealed) === current.id) continue;
    const result = await db
      .updateTable('webhook_endpoints')
      .set({ secret_sealed: reseal(row.secret_sealed) })
      .where('team_id', '=', row.team_id)
      .where('secret_sealed', '=', row.secret_sealed)
      .executeTakeFirst();
    resealed += Number(result.numUpdatedRows);
  }

  const secrets = await db.selectFrom('platform_keys').select(['name', 'value']).execute();
  for (const row of secrets) {
    let next: string | undefined;
    if (sealedWith(row.value) !== undefined) {
      if (count(row.value) !== current.id) next = reseal(row.value);
    } else if (row.value.startsWith('{')) {
      // The internal CA: its certificate in clear, its key sealed inside the JSON.
      const stored = JSON.parse(row.value) as { keySealed?: unknown };
      if (typeof stored.keySealed === 'string' && count(stored.keySealed) !== current.id) {
        next = JSON.stringify({ ...stored, keySealed: reseal(stored.keySealed) });
      }
    }
    if (next === undefined) continue;
    const result = await db
      .updateTable('platform_keys')
      .set({ value: next })
      .where('name', '=', row.name)
      .where('value', '=', row.value)
      .executeTakeFirst();
    resealed += Number(result.numUpdatedRows);
  }
  return { resealed, before };
}
