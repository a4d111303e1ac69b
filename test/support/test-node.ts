import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPlatformConfig } from '../../src/config/index.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import {
  assemblePlatform,
  type PlatformOverrides,
  type StartedPlatform,
} from '../../src/main/assemble-platform.ts';
import type { PlatformContext } from '../../src/platform/context.ts';
import type { Dialect } from '../../src/storage/index.ts';
import { createTestStorage, type TestStorage } from './databases.ts';
import { type Reply, secureRequestAs } from './http.ts';
import { TEST_SEALING_KEY } from './platform.ts';

export interface TestNodeOverrides
  extends Omit<PlatformOverrides, 'storage' | 'clock' | 'changeChannel' | 'logProcessWarnings'> {
  /** Settings by their environment names, over the test defaults (ports 0, silent log, platform.test). */
  readonly env?: Record<string, string>;
  /**
   * The storage of another node: this node shares its database (and, on PostgreSQL, its change
   * channel) and leaves it in place when it stops. None: a fresh one, dropped at stop.
   */
  readonly storage?: TestStorage;
  /** Default: a manual clock at 2026-11-22T12:00:00Z, as test/support/platform.ts. */
  readonly clock?: ManualClock;
}

/** A node started by `startTestNode`: what it is made of, and its stop. */
export interface TestNode {
  readonly ctx: PlatformContext;
  readonly node: StartedPlatform;
  /** The node's clock: set it to `Date.now()` where a client checks certificates. */
  readonly clock: ManualClock;
  /** Where its data is (pass it to a second node to share the database). */
  readonly storage: TestStorage;
  readonly httpPort: number;
  readonly httpsPort: number;
  /** Stops the node's parts in reverse order, then drops its storage if it made it. */
  stop(): Promise<void>;
}

/**
 * One platform node as `npm start` assembles it (src/main/assemble-platform.ts) — management app
 * with the dashboard, jobs, change relay on PostgreSQL, traffic, the edge on free loopback ports —
 * on a real database of `dialect` (test/support/databases.ts), without the bundled Petstore.
 * Certificates and webhook secrets are sealed with TEST_SEALING_KEY, so nodes on one database
 * read each other's. Origins on loopback need a grant (seededOriginGuard grants seeded projects')
 * or KENNEL_ORIGIN_ALLOWLIST in `env`.
 */
export async function startTestNode(dialect: Dialect, overrides: TestNodeOverrides = {}): Promise<TestNode> {
  const { env = {}, storage: shared, clock = new ManualClock('2026-11-22T12:00:00Z'), ...rest } = overrides;
  const storage = shared ?? (await createTestStorage(dialect, { migrated: 'platform' }));
  const dataDir = mkdtempSync(join(tmpdir(), 'kennel-node-'));
  const config = loadPlatformConfig({
    PLATFORM_DOMAIN: 'platform.test',
    HOST: '127.0.0.1',
    HTTP_PORT: '0',
    HTTPS_PORT: '0',
    METRICS_PORT: 'off',
    LOG_LEVEL: 'silent',
    DATA_DIR: dataDir,
    ...env,
  });
  const { location } = storage;
  const assembly = assemblePlatform(config, {
    keys: [TEST_SEALING_KEY],
    ...rest,
    storage: location,
    clock,
    // Test files run in parallel on one PostgreSQL: each schema has its own channel.
    ...(location.kind === 'postgres' && { changeChannel: `kennel_${location.schema ?? 'public'}` }),
    logProcessWarnings: false,
  });
  const removeOwn = async () => {
    rmSync(dataDir, { recursive: true, force: true });
    if (!shared) await storage.drop();
  };
  let node: StartedPlatform;
  try {
    node = await assembly.start();
  } catch (error) {
    await removeOwn();
    throw error;
  }
  return {
    ctx: node.ctx,
    node,
    clock,
    storage,
    httpPort: node.httpPort,
    httpsPort: node.httpsPort,
    async stop() {
      try {
        await assembly.stop();
      } finally {
        await removeOwn();
      }
    },
  };
}

/**
 * A request to a node's HTTPS listener for `host` (SNI and Host), certificate not checked: a
 * running node issues certificates for verified domains, after which it redirects their plain
 * HTTP requests to HTTPS, so HTTPS answers the same before and after.
 */
export function requestNode(
  node: Pick<TestNode, 'httpsPort'>,
  host: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Reply> {
  return secureRequestAs(node.httpsPort, host, path, init);
}
