import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { createEdgeHandler, OriginProxy } from '../../src/edge/index.ts';
import { buildManagementApp } from '../../src/platform/api/app.ts';
import { type ChangeRelay, startChangeRelay } from '../../src/platform/change-relay.ts';
import { ChangeFeed } from '../../src/platform/changes.ts';
import type { Actor, PlatformContext } from '../../src/platform/context.ts';
import type { PlatformTables } from '../../src/platform/db-schema.ts';
import { addDomain } from '../../src/platform/domains/add-domain.ts';
import { removeDomain } from '../../src/platform/domains/remove-domain.ts';
import { verifyDomain } from '../../src/platform/domains/verify-domain.ts';
import { deployProject } from '../../src/platform/projects/deploys.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import { type Database, openDatabase } from '../../src/storage/index.ts';
import { TEST_POSTGRES_URL, testDialects } from '../support/databases.ts';
import { startDns, type TestDns } from '../support/dns.ts';
import { requestAs } from '../support/http.ts';
import { seededOriginGuard } from '../support/origins.ts';
import { seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';

const status = async (port: number, host: string) => (await requestAs(port, host, '/openapi.json')).status;

/** Several nodes share one PostgreSQL; a change on one reaches every edge through NOTIFY. */
describe('two nodes on one PostgreSQL', {
  skip: !testDialects().includes('postgres') && 'TEST_DATABASE excludes postgres',
}, () => {
  let dns: TestDns;
  let p: TestPlatform;
  let databaseB: Database<PlatformTables>;
  let owner: Actor;
  const nodes: {
    app: FastifyInstance;
    server: Server;
    relay: ChangeRelay;
    proxy: OriginProxy;
    close: () => void;
  }[] = [];

  async function startNode(ctx: PlatformContext, nodeId: string) {
    const schema =
      p.storage.location.kind === 'postgres' ? (p.storage.location.schema ?? 'public') : 'public';
    const relay = await startChangeRelay({
      url: TEST_POSTGRES_URL,
      channel: `kennel_${schema}`,
      nodeId,
      feed: ctx.changes,
      onError: () => {},
    });
    const app = buildManagementApp(ctx);
    await app.ready();
    const proxy = new OriginProxy({
      guard: await seededOriginGuard(ctx),
      connectTimeoutMs: 500,
      responseTimeoutMs: 1000,
    });
    const handler = createEdgeHandler({ ctx, platformApp: app, proxy });
    const server = createServer(handler.handle);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    nodes.push({ app, server, relay, proxy, close: handler.close });
    return (server.address() as AddressInfo).port;
  }

  before(async () => {
    dns = await startDns({ zones: ['example.test', 'platform.test'] });
    await dns.setRecords('platform.test', [{ name: 'petstore', type: 'A', value: '127.0.0.1' }]);
    await dns.setRecords('example.test', [{ name: 'shop', type: 'CNAME', value: 'petstore.platform.test' }]);
    p = await startPlatformContext('postgres', { DNS_SERVERS: dns.servers.join(',') });
    databaseB = openDatabase<PlatformTables>(p.storage.location);
    const seeded = await seedTeam(p.ctx);
    owner = seeded.owner;
    await createProject(p.ctx, owner, {
      teamId: seeded.team.id,
      slug: 'petstore',
      name: 'P',
      originUrl: 'http://127.0.0.1:9',
    });
    await deployProject(p.ctx, owner, 'petstore', {
      document: JSON.stringify({ openapi: '3.0.3', info: { title: 'T', version: '1' }, paths: {} }),
    });
  });

  after(async () => {
    for (const node of nodes) {
      node.server.close();
      node.close();
      await node.relay.close();
      await node.proxy.close();
      await node.app.close();
    }
    await databaseB?.close();
    await p?.close();
    await dns?.stop();
  });

  it('a domain removed on node A stops being served by node B within a second', async () => {
    const portA = await startNode(p.ctx, 'node-a');
    const ctxB: PlatformContext = { ...p.ctx, db: databaseB.db, changes: new ChangeFeed() };
    const portB = await startNode(ctxB, 'node-b');
    // Node B has loaded its routing table before the domain exists.
    assert.equal(await status(portB, 'shop.example.test'), 404);

    await addDomain(p.ctx, owner, 'petstore', 'shop.example.test');
    await verifyDomain(p.ctx, owner, 'petstore', 'shop.example.test');
    const deadline = Date.now() + 1000;
    while ((await status(portB, 'shop.example.test')) !== 200 && Date.now() < deadline) await sleep(10);
    assert.equal(
      await status(portB, 'shop.example.test'),
      200,
      'node B serves the domain verified on node A',
    );
    assert.equal(await status(portA, 'shop.example.test'), 200);

    await removeDomain(p.ctx, owner, 'petstore', 'shop.example.test');
    assert.equal(await status(portA, 'shop.example.test'), 404, 'node A: the next request after remove');
    const started = performance.now();
    while ((await status(portB, 'shop.example.test')) !== 404 && performance.now() - started < 2000)
      await sleep(5);
    const elapsed = performance.now() - started;
    assert.equal(await status(portB, 'shop.example.test'), 404);
    assert.ok(elapsed < 1000, `node B kept serving for ${elapsed.toFixed(0)} ms`);
    process.stdout.write(
      `# node B stopped serving ${elapsed.toFixed(0)} ms after remove returned on node A\n`,
    );
  });
});
