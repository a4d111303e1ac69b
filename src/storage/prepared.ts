import type { Compilable, CompiledQuery, Kysely } from 'kysely';

/**
 * A query built and compiled once, run many times with new parameters. Building and compiling a
 * Kysely query costs more than a point read on SQLite, so hot paths use this. The builder is
 * called with placeholder values; each run substitutes the parameters positionally, so the
 * builder must use every placeholder exactly once and in order.
 */
export function prepareQuery<Row, Args extends unknown[]>(
  // biome-ignore lint/suspicious/noExplicitAny: any schema; only executeQuery is used
  db: Kysely<any>,
  build: (...placeholders: Args) => Compilable<Row>,
  placeholders: Args,
): (...args: Args) => Promise<Row[]> {
  const compiled: CompiledQuery<Row> = build(...placeholders).compile();
  if (compiled.parameters.length !== placeholders.length) {
    throw new Error(
      `prepareQuery: the query binds ${compiled.parameters.length} parameters, ${placeholders.length} placeholders were given`,
    );
  }
  return async (...args: Args) => {
    const result = await db.executeQuery<Row>({ ...compiled, parameters: args });
    return result.rows as Row[];
  };
}
