import { createHash } from 'node:crypto';
import type { Compilable, CompiledQuery } from 'kysely';
import type { QueryResultRow } from 'pg';
import type { Database, SQLInputValue } from './connection.ts';

/**
 * A query built and compiled once, run many times with new parameters. Building and compiling a
 * Kysely query costs more than a point read on SQLite, so hot paths use this. The builder is
 * called with placeholder values; each run substitutes the parameters positionally, so the
 * builder must use every placeholder exactly once and in order.
 */
export function prepareQuery<Row, Args extends unknown[]>(
  // biome-ignore lint/suspicious/noExplicitAny: any schema; only executeQuery is used
  database: Database<any>,
  build: (...placeholders: Args) => Compilable<Row>,
  placeholders: Args,
): (...args: Args) => Promise<Row[]> {
  const compiled: CompiledQuery<Row> = build(...placeholders).compile();
  if (compiled.parameters.length !== placeholders.length) {
    throw new Error(
      `prepareQuery: the query binds ${compiled.parameters.length} parameters, ${placeholders.length} placeholders were given`,
    );
  }
  const { sqlite, db } = database;
  if (sqlite) {
    // SQLite: a synchronous read when no transaction holds the connection, else through Kysely.
    return (...args: Args) => {
      const statement = sqlite.readNow(compiled.sql);
      if (!statement)
        return db.executeQuery<Row>({ ...compiled, parameters: args }).then((r) => r.rows as Row[]);
      try {
        return Promise.resolve(statement.all(...(args as SQLInputValue[])) as Row[]);
      } catch (error) {
        return Promise.reject(error);
      }
    };
  }
  const { pgPool } = database;
  if (pgPool) {
    // PostgreSQL: a named statement, parsed and planned once per pooled connection (pg keeps
    // track of which have it), then only bound and executed.
    const name = `k_${createHash('sha256').update(compiled.sql).digest('hex').slice(0, 24)}`;
    return async (...args: Args) => {
      const result = await pgPool.query<QueryResultRow, unknown[]>({
        name,
        text: compiled.sql,
        values: args,
      });
      return result.rows as Row[];
    };
  }
  return async (...args: Args) => {
    const result = await db.executeQuery<Row>({ ...compiled, parameters: args });
    return result.rows as Row[];
  };
}
