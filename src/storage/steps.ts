import type { CompiledQuery, Kysely, Transaction } from 'kysely';

/**
 * Database work written once for both databases and every way of running it: a generator that
 * yields the compiled statements to run, in order, and is handed each one's rows. The same rule
 * then runs synchronously inside SQLite's group commit, over PostgreSQL's group-commit client, or
 * in a caller's Kysely transaction; only the driver differs.
 */
export type Steps<T> = Generator<CompiledQuery, T, readonly unknown[]>;

/** Runs one statement inside `Steps` and gives its rows, typed as the query says. */
export function* rowsOf<Row>(query: CompiledQuery<Row>): Generator<CompiledQuery, Row[], readonly unknown[]> {
  return (yield query) as Row[];
}

/** Drives steps synchronously: each statement runs before the next is asked for. */
export function runStepsSync<T>(steps: Steps<T>, run: (query: CompiledQuery) => readonly unknown[]): T {
  let next = steps.next();
  while (!next.done) next = steps.next(run(next.value));
  return next.value;
}

/** Drives steps over an asynchronous connection, one statement at a time. */
export async function runSteps<T>(
  steps: Steps<T>,
  run: (query: CompiledQuery) => Promise<readonly unknown[]>,
): Promise<T> {
  let next = steps.next();
  while (!next.done) next = steps.next(await run(next.value));
  return next.value;
}

/** Drives steps inside the caller's Kysely transaction (or on the database, outside one). */
export function runStepsIn<T>(
  // biome-ignore lint/suspicious/noExplicitAny: any schema; only executeQuery is used
  trx: Transaction<any> | Kysely<any>,
  steps: Steps<T>,
): Promise<T> {
  return runSteps(steps, async (query) => (await trx.executeQuery(query)).rows);
}
