import { sql } from 'kysely';
import { open, type SealingKey, seal, sealedWith } from '../../lib/sealed-box.ts';
import type { PlatformDb } from '../context.ts';
import type { PlatformTables } from '../db-schema.ts';

export interface ResealReport {
  /** Values re-sealed under the sealing key (the first of CERT_KEYS). */
  readonly resealed: number;
  /** Values found sealed under each key id before re-sealing (what still needed the old keys). */
  readonly before: Readonly<Record<string, number>>;
}

/** A table's column that holds sealed values, and the column that names its row. */
type SealedColumn = {
  [T in keyof PlatformTables]: {
    readonly table: T;
    readonly key: keyof PlatformTables[T] & string;
    readonly column: keyof PlatformTables[T] & string;
    /** Some of its values are in clear: the lease, and the internal CA with its key sealed inside. */
    readonly mixed?: true;
  };
}[keyof PlatformTables];

/** Where sealed values live: certificate private keys, webhook signing secrets, platform keys. */
const SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: 'certificates', key: 'hostname', column: 'key_sealed' },
  { table: 'webhook_endpoints', key: 'team_id', column: 'secret_sealed' },
  { table: 'platform_keys', key: 'name', column: 'value', mixed: true },
];

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
  /** The value sealed under `current`, or undefined when it already is or holds no secret. */
  const next = (value: string, mixed: boolean): string | undefined => {
    if (mixed && sealedWith(value) === undefined) {
      if (!value.startsWith('{')) return undefined;
      // The internal CA: its certificate in clear, its key sealed inside the JSON.
      const stored = JSON.parse(value) as { keySealed?: unknown };
      if (typeof stored.keySealed !== 'string' || count(stored.keySealed) === current.id) return undefined;
      return JSON.stringify({ ...stored, keySealed: reseal(stored.keySealed) });
    }
    return count(value) === current.id ? undefined : reseal(value);
  };
  let resealed = 0;
  for (const { table, key, column, mixed = false } of SEALED_COLUMNS) {
    const rows = await sql<{ id: string | number; value: string }>`
      SELECT ${sql.ref(key)} AS id, ${sql.ref(column)} AS value FROM ${sql.table(table)}`.execute(db);
    for (const row of rows.rows) {
      const value = next(row.value, mixed);
      if (value === undefined) continue;
      const result = await sql`
        UPDATE ${sql.table(table)} SET ${sql.ref(column)} = ${value}
        WHERE ${sql.ref(key)} = ${row.id} AND ${sql.ref(column)} = ${row.value}`.execute(db);
      resealed += Number(result.numAffectedRows ?? 0n);
    }
  }
  return { resealed, before };
}
