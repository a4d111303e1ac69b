import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Actor } from '../../src/platform/context.ts';
import { deployProject } from '../../src/platform/projects/deploys.ts';
import { grantOrigin, revokeOriginGrant } from '../../src/platform/projects/origin-grants.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import { testDialects } from '../support/databases.ts';
import { requestAs } from '../support/http.ts';
import { seedTeam } from '../support/platform.ts';
import { startTestNode, type TestNode } from '../support/test-node.ts';

/**
 * Origin grants reach every edge node like a removed domain: a grant made on node A lets node B
 * forward, and a revocation on A stops B forwarding within a second (A at once).
 */
describe('origin grants on two nodes sharing one PostgreSQL', {
  skip: !testDialects().includes('postgres') && 'TEST_DATABASE excludes postgres',
}, () => {
  let internal: Server;
  let internalOrigin = '';
  let admin: Actor;
  let teamId = 0;
  let nodeA: TestNode;
  let nodeB: TestNode | undefined;
  // The edge's own guard: what the grants allow, as `npm start` builds it.
  const edge = { connectTimeoutMs: 500, responseTimeoutMs: 1000 };

  const forwarded = async (node: TestNode) => {
    const answer = await requestAs(node.httpPort, 'inside.platform.test', '/api/x');
    return answer.status === 200 ? answer.text : (JSON.parse(answer.text) as { code: string }).code;
  };
  const within = async (node: TestNode, expected: string, ms: number) => {
    const deadline = performance.now() + ms;
    while ((await forwarded(node)) !== expected && performance.now() < deadline) await sleep(10);
    return forwarded(node);
  };

  before(async () => {
    internal = createServer((_req, res) => res.end('internal'));
    await new Promise<void>((resolve) => internal.listen(0, '127.0.0.1', () => resolve()));
    internalOrigin = `http://127.0.0.1:${(internal.address() as AddressInfo).port}`;
    nodeA = await startTestNode('postgres', { nodeId: 'node-a', edge });
    const seeded = await seedTeam(nodeA.ctx);
    admin = seeded.admin;
    teamId = seeded.team.id;
    await createProject(nodeA.ctx, seeded.owner, {
      teamId,
      slug: 'inside',
      name: 'Inside',
      originUrl: internalOrigin,
    });
    await deployProject(nodeA.ctx, seeded.owner, 'inside', {
      document: JSON.stringify({ openapi: '3.0.3', info: { title: 'T', version: '1' }, paths: {} }),
    });
  });

  after(async () => {
    // Node B shares node A's database: it stops first.
    await nodeB?.stop();
    await nodeA?.stop();
    internal?.close();
  });

  it('a grant on node A lets node B forward; its revocation stops both', async () => {
    nodeB = await startTestNode('postgres', { storage: nodeA.storage, nodeId: 'node-b', edge });
    assert.equal(await forwarded(nodeB), 'origin_forbidden', 'no grant: node B does not forward');
    assert.equal(await forwarded(nodeA), 'origin_forbidden');

    const { grant } = await grantOrigin(nodeA.ctx, admin, { teamId, origin: internalOrigin });
    assert.equal(await forwarded(nodeA), 'internal', 'node A: the next request after the grant');
    assert.equal(await within(nodeB, 'internal', 1000), 'internal', 'node B hears of the grant');

    await revokeOriginGrant(nodeA.ctx, admin, grant.id);
    assert.equal(await forwarded(nodeA), 'origin_forbidden', 'node A: the next request after revoke');
    const started = performance.now();
    assert.equal(await within(nodeB, 'origin_forbidden', 2000), 'origin_forbidden');
    assert.ok(performance.now() - started < 1000, 'node B stops forwarding within a second');
  });
});
