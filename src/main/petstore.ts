import { join, resolve } from 'node:path';
import { ConfigError, loadPetstoreConfig } from '../config/index.ts';
import { systemClock } from '../lib/clock.ts';
import { buildPetstoreApp, type PetstoreTables, petstoreMigrations } from '../petstore/index.ts';
import { migrateToLatest, openDatabase } from '../storage/index.ts';

/** `npm run petstore`: the Petstore API alone. */
async function main(): Promise<void> {
  let config: ReturnType<typeof loadPetstoreConfig>;
  try {
    config = loadPetstoreConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  const database = openDatabase<PetstoreTables>(
    config.databaseUrl
      ? { kind: 'postgres', url: config.databaseUrl }
      : { kind: 'sqlite', file: join(resolve(config.dataDir), 'petstore.db') },
  );
  await migrateToLatest(database.db, database.dialect, 'petstore', petstoreMigrations);
  const app = buildPetstoreApp({
    database,
    clock: systemClock,
    deprecation: { deprecatedAt: config.deprecatedAt, sunsetAt: config.sunsetAt },
    logger: config.logLevel === 'silent' ? false : { level: config.logLevel },
  });
  const shutdown = async (signal: string) => {
    app.log.info({ signal }, 'shutting down');
    await app.close();
    await database.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  const address = await app.listen({ port: config.port, host: config.host });
  app.log.info(
    { address, storage: database.dialect, openapi: `${address}/openapi.json` },
    `Petstore API listening on ${address} (${database.dialect})`,
  );
}

await main();
