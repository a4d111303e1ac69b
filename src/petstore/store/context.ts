import type { Kysely, Transaction } from 'kysely';
import type { Clock } from '../../lib/clock.ts';
import { type Database, type Dialect, transact } from '../../storage/index.ts';
import type { PetstoreTables } from '../db-schema.ts';

export type PetstoreDb = Kysely<PetstoreTables>;
export type PetstoreTrx = Transaction<PetstoreTables>;

/** What every store operation is given: the database, its dialect and the clock. */
export interface StoreContext {
  readonly database: Database<PetstoreTables>;
  readonly db: PetstoreDb;
  readonly dialect: Dialect;
  readonly clock: Clock;
  /** Counts webhook messages enqueued, so the store can wake the worker after they commit. */
  readonly events?: { enqueued: number };
}

/** Runs `work` in the caller's transaction when there is one, else in a new one. */
export function inTransaction<T>(
  ctx: StoreContext,
  outer: PetstoreTrx | undefined,
  work: (trx: PetstoreTrx) => Promise<T>,
): Promise<T> {
  return outer ? work(outer) : transact(ctx.db, work);
}
