import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, createServer as createTcpServer, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { createEdgeHandler, OriginProxy } from '../../src/edge/index.ts';
import { buildPlatformApp } from '../../src/main/platform-app.ts';
import { type ChangeRelay, startChangeRelay } from '../../src/platform/change-relay.ts';
import { type Change, ChangeFeed } from '../../src/platform/changes.ts';
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

/**
 * The change relay's LISTEN session is cut (pg_terminate_backend, a PostgreSQL restart). The
 * notifications sent while it is gone are lost, so after reconnecting the relay tells its own
 * node to reload everything: a domain removed on another node meanwhile stops being served.
 */
describe('the change relay loses its PostgreSQL session (postgres)', {
  skip: !testDialects().includes('postgres') && 'TEST_DATABASE excludes postgres',
}, () => {
  let dns: TestDns;
  let p: TestPlatform;
  let databaseB: Database<PlatformTables>;
  let owner: Actor;
  const admin = new pg.Pool({ connectionString: TEST_POSTGRES_URL, max: 1 });
  const closers: (() => Promise<void> | void)[] = [];

  async function startNode(
    ctx: PlatformContext,
    relay: Omit<Parameters<typeof startChangeRelay>[0], 'feed' | 'channel'>,
  ): Promise<{ port: number; relay: ChangeRelay }> {
    const schema =
      p.storage.location.kind === 'postgres' ? (p.storage.location.schema ?? 'public') : 'public';
    const started = await startChangeRelay({ ...relay, channel: `kennel_${schema}`, feed: ctx.changes });
    const app: FastifyInstance = buildPlatformApp(ctx);
    await app.ready();
    const proxy = new OriginProxy({
      guard: await seededOriginGuard(ctx),
      connectTimeoutMs: 500,
      responseTimeoutMs: 1000,
    });
    const handler = createEdgeHandler({ ctx, platformApp: app, proxy });
    const server: Server = createServer(handler.handle);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    closers.push(async () => {
      server.close();
      handler.close();
      await started.close();
      await proxy.close();
      await app.close();
    });
    return { port: (server.address() as AddressInfo).port, relay: started };
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
    for (const close of closers.reverse()) await close();
    await databaseB?.close();
    await p?.close();
    await dns?.stop();
    await admin.end();
  });

  it('reconnects with back-off, then reloads everything: a domain removed meanwhile on another node is no longer served', async () => {
    const relayName = `relay_b_${randomBytes(4).toString('hex')}`;
    const nodeA = await startNode(p.ctx, { url: TEST_POSTGRES_URL, nodeId: 'node-a', onError: () => {} });
    const feedB = new ChangeFeed();
    const seenByB: Change[] = [];
    feedB.subscribe((change) => seenByB.push(change));
    const errorsB: unknown[] = [];
    const reconnects: number[] = [];
    const nodeB = await startNode(
      { ...p.ctx, db: databaseB.db, changes: feedB },
      {
        url: `${TEST_POSTGRES_URL}?application_name=${relayName}`,
        nodeId: 'node-b',
        onError: (error) => errorsB.push(error),
        onReconnect: (attempts) => reconnects.push(attempts),
        // Long enough for the removal below to happen while node B is not listening.
        backoff: { baseMs: 1_500, maxMs: 5_000 },
      },
    );

    await addDomain(p.ctx, owner, 'petstore', 'shop.example.test');
    await verifyDomain(p.ctx, owner, 'petstore', 'shop.example.test');
    for (const deadline = Date.now() + 2000; Date.now() < deadline; await sleep(10))
      if ((await status(nodeB.port, 'shop.example.test')) === 200) break;
    assert.equal(await status(nodeB.port, 'shop.example.test'), 200, 'node B serves the verified domain');

    const { rowCount } = await admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
      [relayName],
    );
    assert.equal(rowCount, 1, "node B's LISTEN session");
    for (const deadline = Date.now() + 2000; errorsB.length === 0 && Date.now() < deadline; ) await sleep(10);
    assert.ok(errorsB.length > 0, 'node B heard that its session ended');
    seenByB.length = 0;

    // Removed on node A while node B is not listening: node B misses the notification…
    await removeDomain(p.ctx, owner, 'petstore', 'shop.example.test');
    assert.equal(await status(nodeA.port, 'shop.example.test'), 404);
    await sleep(200);
    assert.deepEqual(seenByB, [], 'node B heard nothing while disconnected');
    assert.equal(
      await status(nodeB.port, 'shop.example.test'),
      200,
      'node B still has the old table (the notification was lost)',
    );

    // …and reloads everything once it listens again.
    const cut = performance.now();
    for (const deadline = Date.now() + 5000; Date.now() < deadline; await sleep(20))
      if ((await status(nodeB.port, 'shop.example.test')) === 404) break;
    const elapsed = performance.now() - cut;
    assert.equal(await status(nodeB.port, 'shop.example.test'), 404, 'node B reloaded its table');
    assert.deepEqual(seenByB, [{ kind: 'everything', projectId: 0 }]);
    assert.deepEqual(reconnects, [1]);
    const { rows } = await admin.query(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
      [relayName],
    );
    assert.equal((rows[0] as { n: number }).n, 1, 'listening again on a new session');
    process.stdout.write(`# node B stopped serving the removed domain ${elapsed.toFixed(0)} ms later\n`);

    // Listening again: a change on node A reaches node B as before.
    seenByB.length = 0;
    p.ctx.changes.publish({ kind: 'projects', projectId: 7 });
    for (const deadline = Date.now() + 2000; seenByB.length === 0 && Date.now() < deadline; ) await sleep(10);
    assert.deepEqual(seenByB, [{ kind: 'projects', projectId: 7 }]);
  });

  it('a session whose network path goes silent is noticed by the heartbeat and replaced, then everything reloads', async () => {
    // A loopback TCP relay to PostgreSQL that can stop carrying bytes on its open connections
    // without closing them: what a dead network path or a frozen server looks like.
    const target = new URL(TEST_POSTGRES_URL);
    const open: { client: Socket; server: Socket; frozen: boolean }[] = [];
    const tcp = createTcpServer((client) => {
      const server = connect(Number(target.port || 5432), target.hostname);
      const pair = { client, server, frozen: false };
      open.push(pair);
      client.on('data', (chunk) => {
        if (!pair.frozen) server.write(chunk);
      });
      server.on('data', (chunk) => {
        if (!pair.frozen) client.write(chunk);
      });
      const close = () => {
        client.destroy();
        server.destroy();
      };
      client.on('close', close).on('error', close);
      server.on('close', close).on('error', close);
    });
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    const url = new URL(TEST_POSTGRES_URL);
    url.host = `127.0.0.1:${(tcp.address() as AddressInfo).port}`;
    const feed = new ChangeFeed();
    const seen: Change[] = [];
    feed.subscribe((change) => seen.push(change));
    const errors: unknown[] = [];
    const relay = await startChangeRelay({
      url: url.toString(),
      channel: 'kennel_relay_heartbeat_test',
      nodeId: 'node-d',
      feed,
      onError: (error) => errors.push(error),
      backoff: { baseMs: 50, maxMs: 100 },
      heartbeat: { everyMs: 100, timeoutMs: 300 },
    });
    try {
      assert.equal(open.length, 1);
      const first = open[0] as (typeof open)[number];
      first.frozen = true;
      for (const deadline = Date.now() + 3000; seen.length === 0 && Date.now() < deadline; ) await sleep(20);
      assert.deepEqual(seen, [{ kind: 'everything', projectId: 0 }]);
      assert.match(String(errors[0]), /timeout/i, errors.map(String).join(' / '));
      assert.equal(first.client.destroyed, true, 'the silent session was closed');
      assert.equal(open.length, 2, 'a new session');
      // The new session hears other nodes.
      seen.length = 0;
      await admin.query(`SELECT pg_notify('kennel_relay_heartbeat_test', $1)`, [
        JSON.stringify({ node: 'node-e', change: { kind: 'domains', projectId: 3 } }),
      ]);
      for (const deadline = Date.now() + 2000; seen.length === 0 && Date.now() < deadline; ) await sleep(10);
      assert.deepEqual(seen, [{ kind: 'domains', projectId: 3 }]);
      // A payload that is not JSON is reported, not fatal.
      await admin.query(`SELECT pg_notify('kennel_relay_heartbeat_test', 'not json')`);
      for (
        const deadline = Date.now() + 2000;
        !errors.some((e) => e instanceof SyntaxError) && Date.now() < deadline;
      )
        await sleep(10);
      assert.ok(
        errors.some((e) => e instanceof SyntaxError),
        errors.map(String).join(' / '),
      );
      assert.ok(
        !errors.some((e) => /Client was closed/.test(String(e))),
        `the silent session is reported once, not probed again: ${errors.map(String).join(' / ')}`,
      );
    } finally {
      await relay.close();
      tcp.close();
      for (const pair of open) pair.client.destroy();
    }
  });

  it('closed while reconnecting: no session is left open or reopened', async () => {
    const feed = new ChangeFeed();
    const errors: unknown[] = [];
    const relayName = `relay_c_${randomBytes(4).toString('hex')}`;
    const relay = await startChangeRelay({
      url: `${TEST_POSTGRES_URL}?application_name=${relayName}`,
      channel: 'kennel_relay_close_test',
      nodeId: 'node-c',
      feed,
      onError: (error) => errors.push(error),
      backoff: { baseMs: 50, maxMs: 100 },
    });
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [
      relayName,
    ]);
    for (const deadline = Date.now() + 2000; errors.length === 0 && Date.now() < deadline; ) await sleep(10);
    await relay.close();
    await sleep(300);
    const { rows } = await admin.query(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
      [relayName],
    );
    assert.equal((rows[0] as { n: number }).n, 0, 'closed: no session left, none reopened');
  });
});
