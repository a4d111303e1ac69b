import type { Compilable, CompiledQuery } from 'kysely';
import type { Database, SQLInputValue } from './connection.ts';
import { batchReads, eachKey } from './read-batch.ts';
import { statementName } from './statement-name.ts';

/**
 * A query built and compiled once; each call gives it with new parameters. Building and
 * compiling a Kysely query costs more than a point read on SQLite, so hot paths use this. The
 * builder is called with placeholder values; each call substitutes the parameters positionally,
 * so the builder must use every placeholder exactly once and in order.
 */
export function compileOnce<Row, Args extends unknown[]>(
  build: (...placeholders: Args) => Compilable<Row>,
  placeholders: Args,
): (...args: Args) => CompiledQuery<Row> {
  const compiled: CompiledQuery<Row> = build(...placeholders).compile();
  if (compiled.parameters.length !== placeholders.length) {
    throw new Error(
      `compileOnce: the query binds ${compiled.parameters.length} parameters, ${placeholders.length} placeholders were given`,
    );
  }
  return (...args: Args) => ({ ...compiled, parameters: args });
}

/**
 * A multi-row statement (an INSERT of n rows) compiled once per row count: `build` is given n
 * placeholder rows and must bind each row's values in the order `values` lists them, row after
 * row, and nothing else.
 */
export function compileRowsOnce<Row, Input>(
  build: (rows: readonly Input[]) => Compilable<Row>,
  placeholder: Input,
  values: (input: Input) => readonly unknown[],
): (rows: readonly Input[]) => CompiledQuery<Row> {
  const byCount = new Map<number, CompiledQuery<Row>>();
  const width = values(placeholder).length;
  return (rows) => {
    let compiled = byCount.get(rows.length);
    if (!compiled) {
      compiled = build(Array.from({ length: rows.length }, () => placeholder)).compile();
      if (compiled.parameters.length !== rows.length * width) {
        throw new Error(
          `compileRowsOnce: ${rows.length} rows bind ${compiled.parameters.length} parameters, expected ${rows.length * width}`,
        );
      }
      // Batches are capped, so this holds a bounded number of shapes.
      byCount.set(rows.length, compiled);
    }
    return { ...compiled, parameters: rows.flatMap(values) };
  };
}

/**
 * A read compiled once whose rows come as their column values in select order, mapped by
 * `fromValues` straight to what the caller returns: no object per row from the driver (node:sqlite
 * builds row objects through the engine's slow path, a fifth of a 20-row list's CPU) and none to
 * rename columns. On SQLite the statement is this read's own (rows as arrays is a statement
 * setting); in a transaction, or on another database, the rows' values are taken in order.
 */
export function prepareValuesQuery<Row, Args extends unknown[], Result>(
  // biome-ignore lint/suspicious/noExplicitAny: any schema; only executeQuery is used
  database: Database<any>,
  build: (...placeholders: Args) => Compilable<Row>,
  placeholders: Args,
  fromValues: (values: readonly unknown[]) => Result,
): (...args: Args) => Promise<Result[]> {
  const query = compileOnce(build, placeholders);
  const { sql } = query(...placeholders);
  const { sqlite, db } = database;
  const viaKysely = (args: Args) =>
    db
      .executeQuery<Row>(query(...args))
      .then((r) => r.rows.map((row) => fromValues(Object.values(row as object))));
  if (sqlite) {
    const statement = sqlite.prepareOwn(sql);
    statement.setReturnArrays(true);
    return (...args: Args) => {
      if (!sqlite.canReadNow()) return viaKysely(args);
      try {
        const rows = statement.all(...(args as SQLInputValue[])) as unknown as (readonly unknown[])[];
        return Promise.resolve(rows.map(fromValues));
      } catch (error) {
        return Promise.reject(error);
      }
    };
  }
  const { pgPool } = database;
  if (pgPool) {
    const name = statementName(sql);
    return async (...args: Args) => {
      const result = await pgPool.query<unknown[], unknown[]>({
        name,
        text: sql,
        values: args,
        rowMode: 'array',
      });
      return result.rows.map(fromValues);
    };
  }
  return (...args: Args) => viaKysely(args);
}

/**
 * A hot read by id (a pet, an inventory entry), compiled once and answered together with the
 * reads asked in the same turn of the event loop (batchReads): on PostgreSQL by one query for all
 * the turn's ids (`all`, an `= ANY`), on SQLite by the one-row statement (`one`) for each id, back
 * to back. Rows come as column values, mapped by `fromValues`; `idOf` finds a result's id.
 */
export function readById<Row, Result>(
  // biome-ignore lint/suspicious/noExplicitAny: any schema; only executeQuery is used
  database: Database<any>,
  queries: { all: (ids: number[]) => Compilable<Row>; one: (id: number) => Compilable<Row> },
  fromValues: (values: readonly unknown[]) => Result,
  idOf: (result: Result) => number,
): (id: number) => Promise<Result | undefined> {
  const load =
    database.dialect === 'postgres'
      ? prepareValuesQuery(database, queries.all, [[] as number[]], fromValues)
      : eachKey(prepareValuesQuery(database, queries.one, [0], fromValues));
  return batchReads(load, idOf);
}
