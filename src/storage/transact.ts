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
 * The one retry loop of a transaction, around one attempt of it (`attempt` calls `committing()`
 * just before COMMIT is sent). A transaction PostgreSQL aborts to break a deadlock or a
 * serialization conflict is retried (it changed nothing). So is one whose connection was lost
 * before COMMIT was sent (PostgreSQL rolls back a transaction whose session ends), after a short
 * pause that lets the pool hear of its other cut connections. One lost during COMMIT is not
 * retried: it may have committed, and only the caller can tell; the error reaches it (an HTTP API
 * answers 503 database_unavailable). Nor is a loss past RETRY_LOST_WITHIN_MS: a server that is
 * down or does not answer will not be back within this request.
 */
export async function retryTransaction<T>(
  attempt: (committing: () => void) => Promise<T>,
  attempts = 5,
): Promise<T> {
  const started = performance.now();
  for (let n = 1; ; n++) {
    let committing = false;
    try {
      return await attempt(() => {
        committing = true;
      });
    } catch (error) {
      if (n >= attempts) throw error;
      if (isRetryable(error)) continue;
      if (committing || !isConnectionLost(error)) throw error;
      if (performance.now() - started > RETRY_LOST_WITHIN_MS) throw error;
      await sleep(25 * n);
    }
  }
}

/** Runs `work` in one transaction: all of it commits or none of it does (retried as `retryTransaction` says). */
export function transact<Schema, T>(
  db: Kysely<Schema>,
  work: (trx: Transaction<Schema>) => Promise<T>,
  attempts = 5,
): Promise<T> {
  return retryTransaction(
    (committing) =>
      db.transaction().execute(async (trx) => {
        const result = await work(trx);
        committing();
        return result;
      }),
    attempts,
  );
}
