import { loadPlatformConfig, type PlatformConfig } from '../../src/config/index.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { parseSealingKey } from '../../src/lib/sealed-box.ts';
import { petstoreDocument } from '../../src/petstore/index.ts';
import { createTeam, setPlan } from '../../src/platform/accounts/teams.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import { obtainDueCertificates } from '../../src/platform/certificates/certificate-job.ts';
import {
  type CertificateStore,
  databaseChallenges,
} from '../../src/platform/certificates/certificate-store.ts';
import type { Issuer } from '../../src/platform/certificates/issuer.ts';
import { ChangeFeed } from '../../src/platform/changes.ts';
import type { Actor, PlatformContext } from '../../src/platform/context.ts';
import { type PlatformTables, platformMigrations } from '../../src/platform/db-schema.ts';
import { createDnsResolver } from '../../src/platform/domains/dns-check.ts';
import { deployProject } from '../../src/platform/projects/deploys.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import { type Database, type Dialect, migrateToLatest, openDatabase } from '../../src/storage/index.ts';
import { createTestStorage, type TestStorage } from './databases.ts';
import { TEST_DEPRECATION } from './petstore.ts';

export interface TestPlatform {
  readonly ctx: PlatformContext;
  readonly clock: ManualClock;
  readonly database: Database<PlatformTables>;
  readonly storage: TestStorage;
  /** What `ctx.webhooks.wake()` calls: a test running a webhook worker points it at the worker. */
  readonly webhookWake: { listener: () => void };
  close(): Promise<void>;
}

/** The sealing key of test platforms (webhook secrets; certificate tests bring their own). */
export const TEST_SEALING_KEY = parseSealingKey(`t1:${Buffer.alloc(32, 9).toString('base64')}`);

/** A control plane on a fresh database, with a manual clock and the given settings (env names). */
export async function startPlatformContext(
  dialect: Dialect,
  env: Record<string, string> = {},
): Promise<TestPlatform> {
  const storage = await createTestStorage(dialect, { migrated: 'platform' });
  const database = openDatabase<PlatformTables>(storage.location);
  await migrateToLatest(database.db, database.dialect, 'platform', platformMigrations);
  const clock = new ManualClock('2026-11-22T12:00:00Z');
  const config: PlatformConfig = loadPlatformConfig({ PLATFORM_DOMAIN: 'platform.test', ...env });
  const webhookWake = { listener: () => {} };
  return {
    ctx: {
      db: database.db,
      dialect: database.dialect,
      clock,
      config,
      changes: new ChangeFeed(),
      resolver: createDnsResolver({ servers: config.dnsServers, timeoutMs: 1000, tries: 2 }),
      webhooks: { keys: [TEST_SEALING_KEY], wake: () => webhookWake.listener() },
    },
    webhookWake,
    clock,
    database,
    storage,
    async close() {
      await database.close();
      await storage.drop();
    },
  };
}

/** The accounts most tests start from: an admin, an owner, and the owner's team on `plan`. */
export async function seedTeam(ctx: PlatformContext, plan: 'free' | 'pro' | 'enterprise' = 'pro') {
  const admin = await createUser(ctx, { email: 'admin@x.test', password: 'admin password 1', isAdmin: true });
  const owner = await createUser(ctx, { email: 'owner@x.test', password: 'owner password 1' });
  const team = await createTeam(ctx, owner, 'Shop');
  if (plan !== 'free') await setPlan(ctx, admin, team.id, plan);
  return { admin, owner, team };
}

/** An OpenAPI document with no paths: enough for a project to be deployed and served. */
export const emptyDocument = (title = 'T') =>
  JSON.stringify({ openapi: '3.0.3', info: { title, version: '1' }, paths: {} });

/**
 * A project made by `owner` in `teamId`, deployed with `document` (default: emptyDocument titled
 * `title`, or the project's name); `document: false` leaves it undeployed.
 */
export async function seedProject(
  ctx: PlatformContext,
  owner: Actor,
  {
    document,
    title,
    ...project
  }: {
    teamId: number;
    slug: string;
    name: string;
    originUrl: string;
    document?: string | false;
    title?: string;
  },
) {
  const created = await createProject(ctx, owner, project);
  if (document === false) return { project: created, deploy: undefined };
  const deploy = await deployProject(ctx, owner, project.slug, {
    document: document ?? emptyDocument(title ?? project.name),
  });
  return { project: created, deploy };
}

/**
 * seedTeam, and the owner's `petstore` project on `originUrl` with the Petstore's document
 * deployed (its deprecation dates fixed, TEST_DEPRECATION): what a published-site test starts from.
 */
export async function seedPetstoreProject(ctx: PlatformContext, originUrl: string) {
  const seeded = await seedTeam(ctx);
  await createProject(ctx, seeded.owner, {
    teamId: seeded.team.id,
    slug: 'petstore',
    name: 'Petstore',
    originUrl,
  });
  await deployProject(ctx, seeded.owner, 'petstore', {
    document: JSON.stringify(petstoreDocument(TEST_DEPRECATION)),
  });
  return seeded;
}

/**
 * The certificate job once, as node `nodeId` runs it: the certificates due, ordered from `issuer`
 * into `store`, with http-01 answers kept in the database where the edge reads them.
 */
export function issueDueCertificates(
  p: Pick<TestPlatform, 'ctx' | 'clock'>,
  { issuer, store, nodeId = 'edge-1' }: { issuer: Issuer; store: CertificateStore; nodeId?: string },
) {
  return obtainDueCertificates(p.ctx, {
    issuer,
    store,
    challenges: databaseChallenges(p.ctx.db, () => p.clock.now()),
    nodeId,
    leaseMs: 60_000,
  });
}
