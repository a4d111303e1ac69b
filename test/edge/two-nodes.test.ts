import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Actor } from '../../src/platform/context.ts';
import { addDomain } from '../../src/platform/domains/add-domain.ts';
import { removeDomain } from '../../src/platform/domains/remove-domain.ts';
import { verifyDomain } from '../../src/platform/domains/verify-domain.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import type { TestDns } from '../support/dns.ts';
import { seedSites, startSiteDns } from '../support/edge-site.ts';
import { requestNode, startTestNode, type TestNode } from '../support/test-node.ts';

const status = async (node: TestNode, host: string) =>
  (await requestNode(node, host, '/openapi.json')).status;

/** Several nodes share one PostgreSQL; a change on one reaches every edge through NOTIFY. */
describe('two nodes on one PostgreSQL', {
  skip: !testDialects().includes('postgres') && 'TEST_DATABASE excludes postgres',
}, () => {
  let dns: TestDns;
  let nodeA: TestNode;
  let nodeB: TestNode | undefined;
  let owner: Actor;

  before(async () => {
    dns = await startSiteDns('shop');
    nodeA = await startTestNode('postgres', {
      env: { DNS_SERVERS: dns.servers.join(',') },
      nodeId: 'node-a',
    });
    const site = { slug: 'petstore', name: 'P', originUrl: 'http://127.0.0.1:9', title: 'T' };
    ({ owner } = await seedSites(nodeA.ctx, [site]));
  });

  // Node B shares node A's database: it stops first.
  after(() => closeAll(nodeB, nodeA, dns));

  it('a domain removed on node A stops being served by node B within a second', async () => {
    nodeB = await startTestNode('postgres', {
      storage: nodeA.storage,
      env: { DNS_SERVERS: dns.servers.join(',') },
      nodeId: 'node-b',
    });
    // Node B has loaded its routing table before the domain exists.
    assert.equal(await status(nodeB, 'shop.example.test'), 404);

    await addDomain(nodeA.ctx, owner, 'petstore', 'shop.example.test');
    await verifyDomain(nodeA.ctx, owner, 'petstore', 'shop.example.test');
    const deadline = Date.now() + 1000;
    while ((await status(nodeB, 'shop.example.test')) !== 200 && Date.now() < deadline) await sleep(10);
    assert.equal(
      await status(nodeB, 'shop.example.test'),
      200,
      'node B serves the domain verified on node A',
    );
    assert.equal(await status(nodeA, 'shop.example.test'), 200);

    await removeDomain(nodeA.ctx, owner, 'petstore', 'shop.example.test');
    assert.equal(await status(nodeA, 'shop.example.test'), 404, 'node A: the next request after remove');
    const started = performance.now();
    while ((await status(nodeB, 'shop.example.test')) !== 404 && performance.now() - started < 2000)
      await sleep(5);
    const elapsed = performance.now() - started;
    assert.equal(await status(nodeB, 'shop.example.test'), 404);
    assert.ok(elapsed < 1000, `node B kept serving for ${elapsed.toFixed(0)} ms`);
    process.stdout.write(
      `# node B stopped serving ${elapsed.toFixed(0)} ms after remove returned on node A\n`,
    );
  });
});
