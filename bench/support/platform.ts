import { randomBytes } from 'node:crypto';
import { loadPlatformConfig } from '../../src/config/index.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { parseSealingKey } from '../../src/lib/sealed-box.ts';
import { bootstrapPlatform } from '../../src/platform/bootstrap.ts';
import { CertificateStore } from '../../src/platform/certificates/certificate-store.ts';
import { ChangeFeed } from '../../src/platform/changes.ts';
import type { PlatformContext } from '../../src/platform/context.ts';
import { type PlatformTables, platformMigrations } from '../../src/platform/db-schema.ts';
import { createDnsResolver } from '../../src/platform/domains/dns-check.ts';
import { migrateToLatest, openDatabase } from '../../src/storage/index.ts';

export interface EdgeDatabase {
  /** What bench/edge-node.ts gets as EDGE_DATABASE: a SQLite file or a postgres:// URL. */
  readonly location: string;
  /** The key sealing certificate private keys (EDGE_CERT_KEY). */
  readonly sealingKey: string;
}

/** A platform context over `location`, for seeding; closed by `close()`. */
export async function openPlatform(location: string, sealingKey: string) {
  const database = openDatabase<PlatformTables>(
    /^postgres(ql)?:\/\//.test(location)
      ? { kind: 'postgres', url: location }
      : { kind: 'sqlite', file: location },
  );
  await migrateToLatest(database.db, database.dialect, 'platform', platformMigrations);
  const config = loadPlatformConfig({ PLATFORM_DOMAIN: 'platform.test', LOG_LEVEL: 'silent' });
  const ctx: PlatformContext = {
    db: database.db,
    dialect: database.dialect,
    clock: systemClock,
    config,
    changes: new ChangeFeed(),
    resolver: createDnsResolver({ servers: config.dnsServers, timeoutMs: 2000, tries: 2 }),
  };
  return {
    ctx,
    store: new CertificateStore(ctx.db, [parseSealingKey(sealingKey)]),
    close: () => database.close(),
  };
}

/**
 * A fresh platform database as a first start leaves it: an admin, a team and the `petstore`
 * project deployed with `originUrl` (served at petstore.platform.test). Closed before an edge
 * node opens it (SQLite is opened in exclusive locking mode).
 */
export async function prepareEdgeDatabase(options: {
  location: string;
  originUrl: string;
  seed?: (platform: Awaited<ReturnType<typeof openPlatform>>) => Promise<void>;
  /** The project's document (default: one without operations). */
  document?: string;
}): Promise<EdgeDatabase> {
  const sealingKey = `bench:${randomBytes(32).toString('base64')}`;
  const platform = await openPlatform(options.location, sealingKey);
  try {
    await bootstrapPlatform(platform.ctx, {
      slug: 'petstore',
      name: 'Petstore API',
      originUrl: options.originUrl,
      document:
        options.document ??
        JSON.stringify({ openapi: '3.0.3', info: { title: 'Bench', version: '1' }, paths: {} }),
    });
    await platform.store.ticketKeys(systemClock.now());
    await options.seed?.(platform);
  } finally {
    await platform.close();
  }
  return { location: options.location, sealingKey };
}
