import { join, resolve } from 'node:path';
import {
  ConfigError,
  loadPetstoreConfig,
  petstoreAppSettings,
  petstoreWebhookSettings,
} from '../config/index.ts';
import { systemClock } from '../lib/clock.ts';
import { logProcessWarnings } from '../lib/process-warnings.ts';
import { sealingKeysOrFile } from '../lib/sealing-key-file.ts';
import {
  buildPetstoreApp,
  ensureAdminKey,
  type PetstoreTables,
  petstoreMigrations,
} from '../petstore/index.ts';
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
      : { kind: 'sqlite', file: join(resolve(config.dataDir), 'petstore.db'), checkpoint: 'background' },
  );
  await migrateToLatest(database.db, database.dialect, 'petstore', petstoreMigrations);
  const settings = petstoreAppSettings(config);
  const app = buildPetstoreApp({
    database,
    clock: systemClock,
    deprecation: { deprecatedAt: config.deprecatedAt, sunsetAt: config.sunsetAt },
    logger: config.logLevel === 'silent' ? false : { level: config.logLevel },
    ...settings,
    // Signing secrets are sealed; the delivery worker starts and stops with the app.
    webhooks: petstoreWebhookSettings(
      config,
      sealingKeysOrFile(config.secretKeys, config.dataDir, 'petstore.key'),
    ),
  });
  logProcessWarnings(app.log);
  if (!settings.authentication) {
    app.log.warn(
      'PETSTORE_AUTHENTICATION=off: every operation is public. Never run this way outside benchmarks.',
    );
  }
  const firstKey = await ensureAdminKey(
    { database, db: database.db, dialect: database.dialect, clock: systemClock },
    config.adminKey,
  );
  const shutdown = async (signal: string) => {
    app.log.info({ signal }, 'shutting down');
    await app.close();
    await database.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
  const address = await app.listen({ port: config.port, host: config.host });
  if (firstKey) {
    // Shown once, on the terminal, never in the logs.
    process.stdout.write(
      `\n  The Petstore's first admin API key (every scope; shown this once, stored only as a hash):\n    ${firstKey.secret}\n  Send it as Authorization: Bearer <key>; create narrower keys with kennel keys create.\n\n`,
    );
  }
  app.log.info(
    { address, storage: database.dialect, openapi: `${address}/openapi.json` },
    `Petstore API listening on ${address} (${database.dialect})`,
  );
}

await main();
