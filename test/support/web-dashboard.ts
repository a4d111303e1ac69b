import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import type { Page } from 'playwright-core';
import { stringify } from 'yaml';
import { buildPlatformApp } from '../../src/main/platform-app.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import type { Dialect } from '../../src/storage/index.ts';
import { launchChromium, type TestBrowser } from './chromium.ts';
import { signIn, watchFailures } from './dashboard-page.ts';
import { createTestStorage } from './databases.ts';
import { seedTeam, type TestPlatform } from './platform.ts';
import { type RunningProcess, startProcess, storageEnv } from './processes.ts';

/**
 * The dashboard's browser tests start the same way (test/web/dashboard-*.test.ts): the management
 * app on a loopback port as platform.test, Chromium mapping the name there, and pages signed in or
 * not whose failed requests are recorded.
 */

/** An app (which serves the dashboard) on a free loopback port: the port. */
export async function listenOnPort(app: FastifyInstance): Promise<number> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return (app.server.address() as AddressInfo).port;
}

export interface Dashboard {
  readonly app: FastifyInstance;
  readonly chromium: TestBrowser;
  /** http://platform.test:PORT */
  readonly base: string;
  /** What failed on the pages opened here (watchFailures): "STATUS METHOD /path", "failed …", errors. */
  readonly failures: string[];
  /** A page in a fresh context (not signed in), its failures recorded. */
  newPage(): Promise<Page>;
  /** A fresh page, not signed in, opening `url`. */
  guest(url: string): Promise<Page>;
  /** A fresh page signed in with the dashboard's form. */
  signedIn(email: string, password: string): Promise<Page>;
  close(): Promise<void>;
}

/** The management app of `p` on a loopback port and Chromium (`mapToLoopback`: platform.test). */
export async function startDashboard(
  p: TestPlatform,
  { mapToLoopback = ['platform.test'] }: { mapToLoopback?: string[] } = {},
): Promise<Dashboard> {
  const app = buildPlatformApp(p.ctx);
  const base = `http://platform.test:${await listenOnPort(app)}`;
  const chromium = await launchChromium({ mapToLoopback });
  const failures: string[] = [];
  const newPage = async () => {
    const page = await (await chromium.newContext()).newPage();
    watchFailures(page, failures);
    return page;
  };
  return {
    app,
    chromium,
    base,
    failures,
    newPage,
    async guest(url) {
      const page = await newPage();
      await page.goto(url);
      return page;
    },
    async signedIn(email, password) {
      const page = await newPage();
      await signIn(page, base, email, password);
      return page;
    },
    async close() {
      await chromium.close();
      await app.close();
    },
  };
}

/**
 * seedTeam (on the test clock set to now, for the browser's cookies), the team's `shop` project
 * ("Shop API") and Mia, a member of the team (mia@x.test, 'mia password 12'): the team's id.
 */
export async function seedShopWithMember(p: TestPlatform): Promise<number> {
  p.clock.set(Date.now());
  const seeded = await seedTeam(p.ctx);
  const shop = seeded.team.id;
  await createProject(p.ctx, seeded.owner, {
    teamId: shop,
    slug: 'shop',
    name: 'Shop API',
    originUrl: 'https://origin.example.com',
  });
  const mia = await createUser(p.ctx, { email: 'mia@x.test', password: 'mia password 12', name: 'Mia' });
  await p.ctx.db
    .insertInto('memberships')
    .values({ team_id: shop, user_id: mia.userId, role: 'member', created_at: p.clock.now().toISOString() })
    .execute();
  return shop;
}

/**
 * `npm start`'s entry (src/main/platform.ts) on a fresh `dialect` database, free ports and `env`:
 * the process, its address by the name localhost, and the admin's credentials as the first start
 * prints them, once ('' if they did not come within 30 s; `server.output()` says why).
 */
export async function startFreshPlatform(dialect: Dialect, env: Record<string, string> = {}) {
  const storage = await createTestStorage(dialect);
  const dataDir = mkdtempSync(join(tmpdir(), 'kennel-fresh-start-'));
  const removeAll = async () => {
    await storage.drop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  let server: RunningProcess;
  try {
    server = await startProcess('platform.ts', {
      DATA_DIR: dataDir,
      ...storageEnv(storage.location),
      HTTP_PORT: '0',
      HTTPS_PORT: '0',
      PETSTORE_PORT: '0',
      ...env,
    });
  } catch (error) {
    await removeAll();
    throw error;
  }
  // The first start prints the admin's credentials once, in a framed block.
  const printed = /email {5}(\S+)\n│ {3}password {2}(\S+) {3}\(shown this once/;
  const deadline = Date.now() + 30_000;
  while (!printed.test(server.output()) && Date.now() < deadline) await sleep(100);
  const [, email = '', password = ''] = printed.exec(server.output()) ?? [];
  return {
    storage,
    server,
    base: server.url.replace('127.0.0.1', 'localhost'),
    admin: { email, password },
    async close() {
      await server.stop();
      await removeAll();
    },
  };
}
export type FreshPlatform = Awaited<ReturnType<typeof startFreshPlatform>>;

/** A YAML document titled `title` with one operation, GET /pets (listPets): what a person deploys from the browser. */
export const listPetsYaml = (title: string) =>
  stringify({
    openapi: '3.0.3',
    info: { title, version: '1.0.0' },
    paths: {
      '/pets': {
        get: {
          operationId: 'listPets',
          summary: 'List pets',
          responses: { '200': { description: 'The pets' } },
        },
      },
    },
  });

/**
 * On a project's Deploys page: deploys `yaml` as the file `name` and waits (up to 60 s) until it is
 * the live deploy, the only one listed.
 */
export async function deployYamlFile(page: Page, name: string, yaml: string) {
  await page.locator('input[type="file"]').setInputFiles({
    name,
    mimeType: 'application/yaml',
    buffer: Buffer.from(yaml),
  });
  await page.getByRole('button', { name: 'Deploy', exact: true }).click();
  await page.locator('tr[data-live="true"]').waitFor({ timeout: 60_000 });
  assert.equal(await page.locator('table.deploy-table tbody tr').count(), 1);
}
