import { setTimeout as sleep } from 'node:timers/promises';
import type { Kysely, Transaction } from 'kysely';
import { isConnectionLost } from './errors.ts';

/** PostgreSQL's "try again" failures: serialization failure and deadlock. */
const RETRYABLE = new Set(['40001', '40P01']);
/** How long a request keeps retrying a transaction whose connection was cut. */
export const RETRY_LOST_WITHIN_MS = 1_000;

/** A transaction PostgreSQL aborted to break a deadlock or a serialization conflict: it changed nothing. */
export function isRetryable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && RETRYABLE.has(code);
}

/**
 * Runs `work` in one transaction: all of it commits or none of it does. A transaction PostgreSQL
 * aborts to break a deadlock or a serialization conflict is retried (it changed nothing). So is
 * one whose connection was lost before COMMIT was sent (PostgreSQL rolls back a transaction whose
 * session ends), on a new connection after a short pause. One lost during COMMIT is not retried:
 * it may have committed, and only the caller can tell; the error reaches it (an HTTP API answers
 * 503 database_unavailable).
 */
export async function transact<Schema, T>(
  db: Kysely<Schema>,
  work: (trx: Transaction<Schema>) => Promise<T>,
  attempts = 5,
): Promise<T> {
  const started = performance.now();
  for (let attempt = 1; ; attempt++) {
    let committing = false;
    try {
      return await db.transaction().execute(async (trx) => {
        const result = await work(trx);
        committing = true;
        return result;
      });
    } catch (error) {
      if (attempt >= attempts) throw error;
      if (isRetryable(error)) continue;
      if (committing || !isConnectionLost(error)) throw error;
      // A server that is down or does not answer will not be back within this request.
      if (performance.now() - started > RETRY_LOST_WITHIN_MS) throw error;
      // Lets the pool hear of its other cut connections before picking one again.
      await sleep(25 * attempt);
    }
  }
}
