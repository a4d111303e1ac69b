import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import type pg from 'pg';
import { isConnectionLost } from './errors.ts';
import { statementName } from './statement-name.ts';
import { runSteps, runStepsSync, type Steps } from './steps.ts';
import { retryTransaction } from './transact.ts';

/** What one item of a batch came to: its value, or the error it alone is answered with. */
export type Outcome<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: unknown };

/**
 * A rule applied to the items queued together, in the order they arrived: the steps that give
 * each item its outcome. A refusal (no stock, unknown pet) is an outcome, not a throw, so it
 * touches no one else; a statement that throws undoes the whole batch (see `batcher`).
 */
export type BatchWork<I, O> = (items: readonly I[]) => Steps<readonly Outcome<O>[]>;

/**
 * Group commit: the items that arrive while the writer is busy (or in one turn of the event
 * loop) share one transaction. Nobody's promise settles before COMMIT returns, so an answer still
 * means "durable". A commit costs far more than the statements, and on PostgreSQL every
 * statement is a round trip, so a rule written for a batch multiplies the write rate.
 */
export interface GroupCommit {
  batched<I, O>(work: BatchWork<I, O>): (item: I) => Promise<O>;
}

/** At most this many items share a transaction; the rest wait for the next one. */
export const MAX_BATCH = 128;

interface Waiter<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

/**
 * Queues items and commits them a batch at a time, one batch in flight. `commit` runs the work
 * for some items in one transaction. When it throws, the batch changed nothing: a lost
 * connection fails every item (the caller answers 503; `commit` has already retried what was
 * safe to retry); any other failure (a statement refused by the database) runs each item in a
 * transaction of its own, so the item at fault fails alone and the others commit.
 */
function batcher<I, O>(commit: (items: readonly I[]) => Promise<readonly Outcome<O>[]>) {
  let queue: Waiter<I, O>[] = [];
  let running = false;

  async function settle(batch: readonly Waiter<I, O>[]): Promise<void> {
    let outcomes: readonly Outcome<O>[];
    try {
      outcomes = await commit(batch.map((w) => w.item));
    } catch (error) {
      if (batch.length === 1 || isConnectionLost(error)) {
        for (const w of batch) w.reject(error);
      } else {
        for (const w of batch) await settle([w]);
      }
      return;
    }
    batch.forEach((w, i) => {
      const outcome = outcomes[i];
      if (!outcome) w.reject(new Error(`group commit: the batch work gave no outcome for item ${i}`));
      else if (outcome.ok) w.resolve(outcome.value);
      else w.reject(outcome.error);
    });
  }

  async function drain(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.length <= MAX_BATCH ? queue : queue.slice(0, MAX_BATCH);
      queue = queue.length <= MAX_BATCH ? [] : queue.slice(MAX_BATCH);
      await settle(batch);
    }
    running = false;
  }

  return (item: I) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (!running) {
        running = true;
        // Lets the requests that arrived in this turn join the first batch.
        setImmediate(() => void drain());
      }
    });
}

/**
 * SQLite: the whole batch runs synchronously (no await between its statements, so no request
 * waits behind an open transaction) while holding Kysely's connection lock, so no Kysely
 * transaction interleaves with it.
 */
export function sqliteGroupCommit(
  lock: { connection(): { execute<T>(fn: () => Promise<T>): Promise<T> } },
  writer: { raw: DatabaseSync; statement: (sql: string) => StatementSync },
): GroupCommit {
  const run = (query: { sql: string; parameters: readonly unknown[] }) =>
    writer.statement(query.sql).all(...(query.parameters as SQLInputValue[]));
  return {
    batched: <I, O>(work: BatchWork<I, O>) =>
      batcher<I, O>((items) =>
        lock.connection().execute(async () => {
          const { raw } = writer;
          raw.exec('BEGIN IMMEDIATE');
          try {
            const outcomes = runStepsSync(work(items), run);
            raw.exec('COMMIT');
            return outcomes;
          } catch (error) {
            if (raw.isTransaction) raw.exec('ROLLBACK');
            throw error;
          }
        }),
      ),
  };
}

/**
 * PostgreSQL: batches run on one dedicated connection (`writer`, a pool of one that reconnects
 * after a loss), one at a time. A batch whose connection is lost before COMMIT is sent is run
 * again on a new connection (PostgreSQL rolled it back), as `transact` does, within the same
 * time bound; one lost during COMMIT may have committed, so it is not: every item fails with the
 * loss (503 database_unavailable). Deadlocks and serialization failures are run again too.
 */
export function postgresGroupCommit(writer: pg.Pool, attempts = 5): GroupCommit {
  // The steps' statements are compiled once, so their texts repeat: each runs as a named
  // prepared statement, parsed and planned once per connection rather than once per batch.
  function commit<T>(steps: () => Steps<T>): Promise<T> {
    return retryTransaction(async (markCommitting) => {
      let committing = false;
      let client: pg.PoolClient | undefined;
      try {
        client = await writer.connect();
        const connection = client;
        await connection.query('BEGIN');
        const result = await runSteps(steps(), async (query) => {
          const answer = await connection.query({
            name: statementName(query.sql),
            text: query.sql,
            values: query.parameters as unknown[],
          });
          return answer.rows;
        });
        committing = true;
        markCommitting();
        await connection.query('COMMIT');
        connection.release();
        return result;
      } catch (error) {
        if (client) await abandon(client, error, committing);
        throw error;
      }
    }, attempts);
  }
  return {
    batched: <I, O>(work: BatchWork<I, O>) => batcher<I, O>((items) => commit(() => work(items))),
  };
}

/** Ends a failed transaction: rolled back when the connection still works, else dropped. */
async function abandon(client: pg.PoolClient, error: unknown, committing: boolean): Promise<void> {
  if (committing || isConnectionLost(error)) {
    client.release(error instanceof Error ? error : new Error(String(error)));
    return;
  }
  try {
    await client.query('ROLLBACK');
    client.release();
  } catch (rollbackError) {
    client.release(rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError)));
  }
}
