import type { Kysely, Transaction } from 'kysely';

/** PostgreSQL's "try again" failures: serialization failure and deadlock. */
const RETRYABLE = new Set(['40001', '40P01']);

/**
 * Runs `work` in one transaction: all of it commits or none of it does. A transaction PostgreSQL
 * aborts to break a deadlock or a serialization conflict is retried (it changed nothing).
 */
export async function transact<Schema, T>(
  db: Kysely<Schema>,
  work: (trx: Transaction<Schema>) => Promise<T>,
  attempts = 5,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(work);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (attempt >= attempts || typeof code !== 'string' || !RETRYABLE.has(code)) throw error;
    }
  }
}
