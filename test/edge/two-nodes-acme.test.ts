import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AcmeIssuer } from '../../src/platform/certificates/acme-issuer.ts';
import { CertificateStore } from '../../src/platform/certificates/certificate-store.ts';
import { type ChangeRelay, startChangeRelay } from '../../src/platform/change-relay.ts';
import { ChangeFeed } from '../../src/platform/changes.ts';
import type { Actor } from '../../src/platform/context.ts';
import type { PlatformTables } from '../../src/platform/db-schema.ts';
import { addDomain } from '../../src/platform/domains/add-domain.ts';
import { applyDomainConfig } from '../../src/platform/domains/apply-domain-config.ts';
import { verifyDomain } from '../../src/platform/domains/verify-domain.ts';
import { type Database, openDatabase } from '../../src/storage/index.ts';
import { closeAll } from '../support/cleanup.ts';
import { TEST_POSTGRES_URL, testDialects } from '../support/databases.ts';
import type { TestDns } from '../support/dns.ts';
import { startTestEdge, type TestEdge } from '../support/edge.ts';
import {
  type EdgeSite,
  type LoopbackServer,
  pebbleIssuer,
  recordingOrigin,
  startEdgeSite,
  startSiteDns,
} from '../support/edge-site.ts';
import { tlsGet } from '../support/edge-tls.ts';
import { requestAs } from '../support/http.ts';
import { startPebble, type TestPebble } from '../support/pebble.ts';
import { issueDueCertificates, TEST_SEALING_KEY, type TestPlatform } from '../support/platform.ts';

const HOST = 'shop.example.test';
const DEFAULT_HOST = 'petstore.platform.test';
const CHALLENGE_PREFIX = '/.well-known/acme-challenge/';

interface EdgeNode {
  readonly httpPort: number;
  readonly httpsPort: number;
  /** http-01 requests this node's edge answered. */
  challengeRequests: number;
}

/**
 * Scale-out with ACME (PostgreSQL only: several nodes share one database). Node A runs the
 * certificate job and places the order; Pebble validates http-01 against node B's edge, which
 * reads the answer A wrote from the database. B hears of the new certificate through
 * LISTEN/NOTIFY and serves it, as A does.
 */
describe('two nodes on one PostgreSQL: node A orders, Pebble validates through node B (PostgreSQL only)', {
  skip: !testDialects().includes('postgres') && 'TEST_DATABASE excludes postgres',
}, () => {
  let dns: TestDns;
  let site: EdgeSite;
  let p: TestPlatform;
  let pebble: TestPebble;
  let issuer: AcmeIssuer;
  let databaseB: Database<PlatformTables>;
  let owner: Actor;
  let origin: LoopbackServer;
  let nodeA: EdgeNode;
  let nodeB: EdgeNode;
  /** Each node's edge and change relay, stopped in that order. */
  const parts: (TestEdge | ChangeRelay)[] = [];

  /** An edge node on `platform` (its own database pool and change feed), told of other nodes' changes. */
  async function startNode(platform: TestPlatform, nodeId: string): Promise<EdgeNode> {
    const { location } = platform.storage;
    const relay = await startChangeRelay({
      url: TEST_POSTGRES_URL,
      channel: `kennel_${location.kind === 'postgres' ? (location.schema ?? 'public') : 'public'}`,
      nodeId,
      feed: platform.ctx.changes,
      onError: () => {},
    });
    parts.unshift(relay);
    const edge = await startTestEdge(platform, { responseTimeoutMs: 2000, nodeId });
    parts.unshift(edge);
    const node: EdgeNode = { httpPort: edge.httpPort, httpsPort: edge.httpsPort, challengeRequests: 0 };
    edge.http.on('request', (req) => {
      if (req.url?.startsWith(CHALLENGE_PREFIX)) node.challengeRequests++;
    });
    return node;
  }

  /** The certificate a node presents for HOST to a client trusting only `ca`. */
  const certificateFrom = (node: EdgeNode, ca: string) => tlsGet(node.httpsPort, HOST, '/api/hello', { ca });

  before(async () => {
    dns = await startSiteDns('shop');
    origin = await recordingOrigin();
    site = await startEdgeSite('postgres', {
      env: { DNS_SERVERS: dns.servers.join(','), CAA_IDENTIFIER: 'pebble.test' },
      now: true,
      projects: [{ slug: 'petstore', name: 'P', originUrl: origin.url, title: 'T' }],
    });
    ({ p, owner } = site);
    databaseB = openDatabase<PlatformTables>(p.storage.location);
    nodeA = await startNode(p, 'node-a');
    nodeB = await startNode(
      { ...p, ctx: { ...p.ctx, db: databaseB.db, changes: new ChangeFeed() } },
      'node-b',
    );
    // The name resolves to loopback, and Pebble dials node B's HTTP port there: only B is asked.
    pebble = await startPebble({ httpPort: nodeB.httpPort, dnsServer: dns.servers[0] as string });
    issuer = pebbleIssuer(pebble, ['pebble.test']);
  });

  after(() => closeAll(...parts, origin, issuer, pebble, databaseB, site, dns));

  it('A places the order, Pebble validates through B, and both nodes serve the certificate and redirect to the live primary (B within a second)', async () => {
    await addDomain(p.ctx, owner, 'petstore', HOST);
    await verifyDomain(p.ctx, owner, 'petstore', HOST);
    // Both nodes serve the domain over HTTP, and B has looked up (and cached) "no certificate".
    const deadline = Date.now() + 1000;
    while ((await requestAs(nodeB.httpPort, HOST, '/api/x')).status !== 200 && Date.now() < deadline)
      await sleep(10);
    assert.equal((await requestAs(nodeA.httpPort, HOST, '/api/x')).status, 200);
    assert.equal((await requestAs(nodeB.httpPort, HOST, '/api/x')).status, 200);
    const root = await pebble.rootPem();
    await assert.rejects(certificateFrom(nodeB, root), /unable to verify the first certificate/);
    // The primary is set on A but not live yet: B's default address serves the site.
    await applyDomainConfig(p.ctx, owner, 'petstore', `domains:\n  primary: ${HOST}\n`);
    assert.equal((await requestAs(nodeB.httpPort, DEFAULT_HOST, '/openapi.json')).status, 200);

    const store = new CertificateStore(p.ctx.db, [TEST_SEALING_KEY]);
    const issued = await issueDueCertificates(p, { issuer, store, nodeId: 'node-a' });
    const started = performance.now();
    assert.deepEqual(issued, [HOST]);
    assert.ok(nodeB.challengeRequests >= 1, `node B answered ${nodeB.challengeRequests} challenge requests`);
    assert.equal(nodeA.challengeRequests, 0, 'Pebble never asked node A');
    const challengesLeft = await databaseB.db.selectFrom('acme_challenges').select('token').execute();
    assert.deepEqual(challengesLeft, [], 'the answers are removed once the order is done');

    // Node A: at once (its own change feed).
    const fromA = await certificateFrom(nodeA, root);
    assert.equal(fromA.status, 200);
    assert.equal(fromA.peer.subjectAltName, `DNS:${HOST}`);
    // Node B: once the notification arrives.
    let fromB: Awaited<ReturnType<typeof certificateFrom>> | undefined;
    while (fromB === undefined && performance.now() - started < 2000) {
      fromB = await certificateFrom(nodeB, root).catch(() => undefined);
      if (fromB === undefined) await sleep(5);
    }
    const elapsed = performance.now() - started;
    assert.ok(fromB, 'node B never served the new certificate');
    assert.ok(elapsed < 1000, `node B served the default certificate for ${elapsed.toFixed(0)} ms`);
    assert.equal(fromB.status, 200);
    assert.deepEqual(JSON.parse(fromB.text), { url: '/hello' });
    assert.equal(fromB.peer.serialNumber, fromA.peer.serialNumber, 'the same certificate on both nodes');
    // The primary is live now: B's default address redirects to it, told by the same notification.
    const redirect = await requestAs(nodeB.httpPort, DEFAULT_HOST, '/openapi.json?v=1');
    assert.equal(redirect.status, 308);
    assert.equal(redirect.headers.location, `https://${HOST}:${nodeB.httpsPort}/openapi.json?v=1`);
    process.stdout.write(`# node B served the certificate ${elapsed.toFixed(0)} ms after node A stored it\n`);
  });
});
