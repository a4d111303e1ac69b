import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import type { Kysely } from 'kysely';
import type { PlatformTables } from '../../src/platform/db-schema.ts';
import type { Dialect, StorageLocation } from '../../src/storage/index.ts';
import { createTestStorage } from './databases.ts';
import { type RunningProcess, startProcess, storageEnv } from './processes.ts';

/**
 * What a node killed mid-order leaves behind, and how a test sees it served again: for the
 * restart and takeover tests of the certificate job's lease (test/platform/restart-lease.test.ts,
 * two-node-takeover.test.ts), which run `npm start` as child processes.
 */

/** The settings of a platform node on `location`: free ports, its name and certificate keys. */
export const nodeEnv = (
  location: StorageLocation,
  node: { dataDir: string; name: string; certKeys: string },
) => ({
  ...storageEnv(location),
  DATA_DIR: node.dataDir,
  HTTP_PORT: '0',
  HTTPS_PORT: '0',
  PETSTORE_PORT: '0',
  NODE_NAME: node.name,
  CERT_KEYS: node.certKeys,
});

/**
 * Platform processes (`npm start`) on one fresh storage, sharing certificate keys: `env(name)` is a
 * node's settings (its data in a directory of its own unless `dataDir` is given), `start(env)`
 * runs one, and `close()` kills every node started and drops the storage and the directories.
 */
export async function platformNodes(dialect: Dialect) {
  const storage = await createTestStorage(dialect);
  const certKeys = `k1:${randomBytes(32).toString('base64')}`;
  const nodes: RunningProcess[] = [];
  const dirs: string[] = [];
  return {
    storage,
    env(name: string, dataDir?: string) {
      const dir = dataDir ?? mkdtempSync(join(tmpdir(), `kennel-${name}-`));
      if (dataDir === undefined) dirs.push(dir);
      return nodeEnv(storage.location, { dataDir: dir, name, certKeys });
    },
    async start(env: Record<string, string>) {
      const node = await startProcess('platform.ts', env);
      nodes.push(node);
      return node;
    },
    async close() {
      for (const node of nodes) await node.stop('SIGKILL');
      await storage.drop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Waits up to `withinMs` after `since` until `node` presents `hostname`'s own certificate (the test
 * fails if it does not): how long it took, in ms.
 */
export async function servedWithin(node: RunningProcess, hostname: string, since: number, withinMs: number) {
  const port = httpsPortOf(node);
  assert.ok(port, node.output());
  const { cn, ms } = await waitForCertificate(port, hostname, since, withinMs);
  assert.equal(cn, hostname, `no certificate for ${hostname} after ${ms} ms:\n${node.output()}`);
  return ms;
}

/** The HTTPS port a started platform process logged. */
export const httpsPortOf = (node: RunningProcess) =>
  Number(/"https":"https:\/\/[^"]*:(\d+)"/.exec(node.output())?.[1]);

/** The subject CN of the certificate the node presents for `servername` (undefined: none, or no answer). */
export function presentedName(port: number, servername: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', servername, rejectUnauthorized: false }, () => {
      const cn = socket.getPeerCertificate().subject?.CN;
      socket.destroy();
      resolve(Array.isArray(cn) ? cn[0] : cn);
    });
    socket.on('error', () => resolve(undefined));
  });
}

/**
 * Asks every 100 ms, for at most `withinMs` after `since` (a Date.now()), which certificate the
 * node presents for `hostname`, until it is the host's own: the last name presented, and when.
 */
export async function waitForCertificate(port: number, hostname: string, since: number, withinMs: number) {
  let cn: string | undefined;
  while (Date.now() - since < withinMs) {
    cn = await presentedName(port, hostname);
    if (cn === hostname) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { cn, ms: Date.now() - since };
}

/**
 * A verified domain of the `petstore` project whose certificate order `leaseOwner` is working on:
 * state `ordering`, its lease renewed just now for 15 s (and nobody left to renew it).
 */
export async function insertLeasedOrder(
  db: Kysely<PlatformTables>,
  dialect: Dialect,
  order: { hostname: string; leaseOwner: string; leaseInstance: string },
) {
  const now = new Date();
  await db.transaction().execute(async (trx) => {
    const project = await trx
      .selectFrom('projects')
      .select('id')
      .where('slug', '=', 'petstore')
      .executeTakeFirstOrThrow();
    const domain = await trx
      .insertInto('domains')
      .values({
        project_id: project.id,
        hostname: order.hostname,
        state: 'verified',
        is_apex: (dialect === 'postgres' ? false : 0) as never,
        ownership_token: 'token',
        reason: null,
        reason_detail: null,
        verified_at: now.toISOString(),
        last_checked_at: now.toISOString(),
        next_check_at: new Date(now.getTime() + 86_400_000).toISOString(),
        check_attempts: 0,
        checks_until: null,
        created_at: now.toISOString(),
        removed_at: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await trx
      .insertInto('certificate_jobs')
      .values({
        domain_id: domain.id,
        hostname: order.hostname,
        state: 'ordering',
        reason: null,
        attempts: 0,
        next_attempt_at: now.toISOString(),
        lease_owner: order.leaseOwner,
        lease_instance: order.leaseInstance,
        lease_until: new Date(now.getTime() + 15_000).toISOString(),
        updated_at: now.toISOString(),
      })
      .execute();
  });
}
