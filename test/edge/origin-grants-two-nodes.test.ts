import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { type StartedEdge, startEdge } from '../../src/edge/index.ts';
import { buildManagementApp } from '../../src/platform/api/app.ts';
import { type ChangeRelay, startChangeRelay } from '../../src/platform/change-relay.ts';
import { ChangeFeed } from '../../src/platform/changes.ts';
import type { Actor, PlatformContext } from '../../src/platform/context.ts';
import type { PlatformTables } from '../../src/platform/db-schema.ts';
import { deployProject } from '../../src/platform/projects/deploys.ts';
import { grantOrigin, revokeOriginGrant } from '../../src/platform/projects/origin-grants.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import { type Database, openDatabase } from '../../src/storage/index.ts';
import { TEST_POSTGRES_URL, testDialects } from '../support/databases.ts';
import { requestAs } from '../support/http.ts';
import { seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';

/**
 * Origin grants reach every edge node like a removed domain: a grant made on node A lets node B
 * forward, and a revocation on A stops B forwarding within a second (A at once).
 */
describe('origin grants on two nodes sharing one PostgreSQL', {
  skip: !testDialects().includes('postgres') && 'TEST_DATABASE excludes postgres',
}, () => {
  let p: TestPlatform;
  let databaseB: Database<PlatformTables>;
  let internal: Server;
  let internalOrigin = '';
  let admin: Actor;
  let teamId = 0;
  const nodes: { app: FastifyInstance; relay: ChangeRelay; edge: StartedEdge }[] = [];

  async function startNode(ctx: PlatformContext, nodeId: string): Promise<number> {
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
    // The edge's own guard: what the grants allow, as `npm start` builds it.
    const edge = await startEdge({
      ctx,
      platformApp: app,
      host: '127.0.0.1',
      httpPort: 0,
      connectTimeoutMs: 500,
      responseTimeoutMs: 1000,
    });
    nodes.push({ app, relay, edge });
    return edge.httpPort;
  }

  const forwarded = async (port: number) => {
    const answer = await requestAs(port, 'inside.platform.test', '/api/x');
    return answer.status === 200 ? answer.text : (JSON.parse(answer.text) as { code: string }).code;
  };
  const within = async (port: number, expected: string, ms: number) => {
    const deadline = performance.now() + ms;
    while ((await forwarded(port)) !== expected && performance.now() < deadline) await sleep(10);
    return forwarded(port);
  };

  before(async () => {
    internal = createServer((_req, res) => res.end('internal'));
    await new Promise<void>((resolve) => internal.listen(0, '127.0.0.1', () => resolve()));
    internalOrigin = `http://127.0.0.1:${(internal.address() as AddressInfo).port}`;
    p = await startPlatformContext('postgres');
    databaseB = openDatabase<PlatformTables>(p.storage.location);
    const seeded = await seedTeam(p.ctx);
    admin = seeded.admin;
    teamId = seeded.team.id;
    await createProject(p.ctx, seeded.owner, {
      teamId,
      slug: 'inside',
      name: 'Inside',
      originUrl: internalOrigin,
    });
    await deployProject(p.ctx, seeded.owner, 'inside', {
      document: JSON.stringify({ openapi: '3.0.3', info: { title: 'T', version: '1' }, paths: {} }),
    });
  });

  after(async () => {
    for (const node of nodes) {
      await node.edge.close();
      await node.relay.close();
      await node.app.close();
    }
    internal?.close();
    await databaseB?.close();
    await p?.close();
  });

  it('a grant on node A lets node B forward; its revocation stops both', async () => {
    const portA = await startNode(p.ctx, 'node-a');
    const portB = await startNode({ ...p.ctx, db: databaseB.db, changes: new ChangeFeed() }, 'node-b');
    assert.equal(await forwarded(portB), 'origin_forbidden', 'no grant: node B does not forward');
    assert.equal(await forwarded(portA), 'origin_forbidden');

    const { grant } = await grantOrigin(p.ctx, admin, { teamId, origin: internalOrigin });
    assert.equal(await forwarded(portA), 'internal', 'node A: the next request after the grant');
    assert.equal(await within(portB, 'internal', 1000), 'internal', 'node B hears of the grant');

    await revokeOriginGrant(p.ctx, admin, grant.id);
    assert.equal(await forwarded(portA), 'origin_forbidden', 'node A: the next request after revoke');
    const started = performance.now();
    assert.equal(await within(portB, 'origin_forbidden', 2000), 'origin_forbidden');
    assert.ok(performance.now() - started < 1000, 'node B stops forwarding within a second');
  });
});
