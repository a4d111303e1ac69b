import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { type AddressInfo, connect, createServer as createTcpServer, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { startChangeRelay } from '../../src/platform/change-relay.ts';
import { type Change, ChangeFeed } from '../../src/platform/changes.ts';
import type { Actor } from '../../src/platform/context.ts';
import { addDomain } from '../../src/platform/domains/add-domain.ts';
import { removeDomain } from '../../src/platform/domains/remove-domain.ts';
import { verifyDomain } from '../../src/platform/domains/verify-domain.ts';
import { deployProject } from '../../src/platform/projects/deploys.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import { TEST_POSTGRES_URL, testDialects } from '../support/databases.ts';
import { startDns, type TestDns } from '../support/dns.ts';
import { seedTeam } from '../support/platform.ts';
import { requestNode, startTestNode, type TestNode } from '../support/test-node.ts';

/**
 * Node B's LISTEN session in pg_stat_activity, by the application name of its relay's URL ($1):
 * the relay's other sessions (its notifier pool, when the node publishes a change) have the same
 * name, and their last query is the notification.
 */
const LISTENER = `application_name = $1 AND query NOT LIKE 'SELECT pg_notify%'`;

const status = async (node: TestNode, host: string) =>
  (await requestNode(node, host, '/openapi.json')).status;

/**
 * The change relay's LISTEN session is cut (pg_terminate_backend, a PostgreSQL restart). The
 * notifications sent while it is gone are lost, so after reconnecting the relay tells its own
 * node to reload everything: a domain removed on another node meanwhile stops being served.
 */
describe('the change relay loses its PostgreSQL session (postgres)', {
  skip: !testDialects().includes('postgres') && 'TEST_DATABASE excludes postgres',
}, () => {
  let dns: TestDns;
  let nodeA: TestNode;
  let nodeB: TestNode | undefined;
  let owner: Actor;
  const admin = new pg.Pool({ connectionString: TEST_POSTGRES_URL, max: 1 });

  before(async () => {
    dns = await startDns({ zones: ['example.test', 'platform.test'] });
    await dns.setRecords('platform.test', [{ name: 'petstore', type: 'A', value: '127.0.0.1' }]);
    await dns.setRecords('example.test', [{ name: 'shop', type: 'CNAME', value: 'petstore.platform.test' }]);
    nodeA = await startTestNode('postgres', {
      env: { DNS_SERVERS: dns.servers.join(',') },
      nodeId: 'node-a',
    });
    const seeded = await seedTeam(nodeA.ctx);
    owner = seeded.owner;
    await createProject(nodeA.ctx, owner, {
      teamId: seeded.team.id,
      slug: 'petstore',
      name: 'P',
      originUrl: 'http://127.0.0.1:9',
    });
    await deployProject(nodeA.ctx, owner, 'petstore', {
      document: JSON.stringify({ openapi: '3.0.3', info: { title: 'T', version: '1' }, paths: {} }),
    });
  });

  after(async () => {
    // Node B shares node A's database: it stops first.
    await nodeB?.stop();
    await nodeA?.stop();
    await dns?.stop();
    await admin.end();
  });

  it('reconnects with back-off, then reloads everything: a domain removed meanwhile on another node is no longer served', async () => {
    const relayName = `relay_b_${randomBytes(4).toString('hex')}`;
    const errorsB: unknown[] = [];
    const reconnects: number[] = [];
    nodeB = await startTestNode('postgres', {
      storage: nodeA.storage,
      env: { DNS_SERVERS: dns.servers.join(',') },
      nodeId: 'node-b',
      changeRelay: {
        // Node B's relay's sessions carry this name.
        url: `${TEST_POSTGRES_URL}?application_name=${relayName}`,
        onError: (error) => errorsB.push(error),
        onReconnect: (attempts) => reconnects.push(attempts),
        // Long enough for the removal below to happen while node B is not listening.
        backoff: { baseMs: 1_500, maxMs: 5_000 },
      },
    });
    const seenByB: Change[] = [];
    nodeB.ctx.changes.subscribe((change) => seenByB.push(change));

    await addDomain(nodeA.ctx, owner, 'petstore', 'shop.example.test');
    await verifyDomain(nodeA.ctx, owner, 'petstore', 'shop.example.test');
    for (const deadline = Date.now() + 2000; Date.now() < deadline; await sleep(10))
      if ((await status(nodeB, 'shop.example.test')) === 200) break;
    assert.equal(await status(nodeB, 'shop.example.test'), 200, 'node B serves the verified domain');

    const { rowCount } = await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE ${LISTENER}`,
      [relayName],
    );
    assert.equal(rowCount, 1, "node B's LISTEN session");
    for (const deadline = Date.now() + 2000; errorsB.length === 0 && Date.now() < deadline; ) await sleep(10);
    assert.ok(errorsB.length > 0, 'node B heard that its session ended');
    seenByB.length = 0;

    // Removed on node A while node B is not listening: node B misses the notification…
    await removeDomain(nodeA.ctx, owner, 'petstore', 'shop.example.test');
    assert.equal(await status(nodeA, 'shop.example.test'), 404);
    await sleep(200);
    assert.deepEqual(seenByB, [], 'node B heard nothing while disconnected');
    assert.equal(
      await status(nodeB, 'shop.example.test'),
      200,
      'node B still has the old table (the notification was lost)',
    );

    // …and reloads everything once it listens again.
    const cut = performance.now();
    for (const deadline = Date.now() + 5000; Date.now() < deadline; await sleep(20))
      if ((await status(nodeB, 'shop.example.test')) === 404) break;
    const elapsed = performance.now() - cut;
    assert.equal(await status(nodeB, 'shop.example.test'), 404, 'node B reloaded its table');
    assert.deepEqual(seenByB, [{ kind: 'everything', projectId: 0 }]);
    assert.deepEqual(reconnects, [1]);
    const { rows } = await admin.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE ${LISTENER}`, [
      relayName,
    ]);
    assert.equal((rows[0] as { n: number }).n, 1, 'listening again on a new session');
    process.stdout.write(`# node B stopped serving the removed domain ${elapsed.toFixed(0)} ms later\n`);

    // Listening again: a change on node A reaches node B as before.
    seenByB.length = 0;
    nodeA.ctx.changes.publish({ kind: 'projects', projectId: 7 });
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
