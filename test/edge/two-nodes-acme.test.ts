import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TLSSocket } from 'node:tls';
import type { FastifyInstance } from 'fastify';
import {
  CertificateCache,
  createEdgeHandler,
  createTlsServer,
  type EdgeTlsServer as HttpsServer,
  OriginProxy,
} from '../../src/edge/index.ts';
import { parseSealingKey } from '../../src/lib/sealed-box.ts';
import { buildPlatformApp } from '../../src/main/platform-app.ts';
import { AcmeIssuer } from '../../src/platform/certificates/acme-issuer.ts';
import { obtainDueCertificates } from '../../src/platform/certificates/certificate-job.ts';
import { CertificateStore, databaseChallenges } from '../../src/platform/certificates/certificate-store.ts';
import { InternalIssuer } from '../../src/platform/certificates/internal-issuer.ts';
import { type ChangeRelay, startChangeRelay } from '../../src/platform/change-relay.ts';
import { ChangeFeed } from '../../src/platform/changes.ts';
import type { Actor, PlatformContext } from '../../src/platform/context.ts';
import type { PlatformTables } from '../../src/platform/db-schema.ts';
import { addDomain } from '../../src/platform/domains/add-domain.ts';
import { applyDomainConfig } from '../../src/platform/domains/apply-domain-config.ts';
import { verifyDomain } from '../../src/platform/domains/verify-domain.ts';
import { deployProject } from '../../src/platform/projects/deploys.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import { type Database, openDatabase } from '../../src/storage/index.ts';
import { TEST_POSTGRES_URL, testDialects } from '../support/databases.ts';
import { startDns, type TestDns } from '../support/dns.ts';
import { requestAs } from '../support/http.ts';
import { seededOriginGuard } from '../support/origins.ts';
import { startPebble, type TestPebble } from '../support/pebble.ts';
import { seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';

const KEY = parseSealingKey(`k1:${Buffer.alloc(32, 7).toString('base64')}`);
const HOST = 'shop.example.test';
const DEFAULT_HOST = 'petstore.platform.test';
const CHALLENGE_PREFIX = '/.well-known/acme-challenge/';
const portOf = (server: Server | HttpsServer) => (server.address() as AddressInfo).port;
const listen = (server: Server | HttpsServer) =>
  new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));

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
  let p: TestPlatform;
  let pebble: TestPebble;
  let issuer: AcmeIssuer;
  let databaseB: Database<PlatformTables>;
  let ctxB: PlatformContext;
  let owner: Actor;
  let origin: Server;
  let nodeA: EdgeNode;
  let nodeB: EdgeNode;
  const cleanups: (() => Promise<void> | void)[] = [];

  async function startNode(ctx: PlatformContext, nodeId: string): Promise<EdgeNode> {
    const schema =
      p.storage.location.kind === 'postgres' ? (p.storage.location.schema ?? 'public') : 'public';
    const relay: ChangeRelay = await startChangeRelay({
      url: TEST_POSTGRES_URL,
      channel: `kennel_${schema}`,
      nodeId,
      feed: ctx.changes,
      onError: () => {},
    });
    const app: FastifyInstance = buildPlatformApp(ctx);
    await app.ready();
    const store = new CertificateStore(ctx.db, [KEY]);
    const defaultCertificate = await new InternalIssuer(await store.internalCa(ctx.clock.now())).issue(
      'platform.test',
    );
    const certificates = new CertificateCache(store, defaultCertificate);
    const proxy = new OriginProxy({
      guard: await seededOriginGuard(ctx),
      connectTimeoutMs: 500,
      responseTimeoutMs: 2000,
    });
    const http = createServer();
    await listen(http);
    const https = createTlsServer({
      certificates,
      defaultCertificate,
      ticketKeys: await store.ticketKeys(ctx.clock.now()),
      handle: () => {},
    });
    await listen(https);
    const handler = createEdgeHandler({
      ctx,
      platformApp: app,
      proxy,
      certificates,
      challenges: databaseChallenges(ctx.db, () => ctx.clock.now()),
      httpsPort: portOf(https),
    });
    const node: EdgeNode = { httpPort: portOf(http), httpsPort: portOf(https), challengeRequests: 0 };
    http.on('request', (req, res) => {
      if (req.url?.startsWith(CHALLENGE_PREFIX)) node.challengeRequests++;
      handler.handle(req, res);
    });
    https.removeAllListeners('request');
    https.on('request', handler.handle);
    cleanups.push(async () => {
      http.close();
      https.close();
      handler.close();
      await relay.close();
      await proxy.close();
      await app.close();
    });
    return node;
  }

  /** The certificate a node presents for HOST to a client trusting only `ca`. */
  const certificateFrom = (node: EdgeNode, ca: string) =>
    new Promise<{ status: number; text: string; peer: X509Certificate }>((resolve, reject) => {
      const req = httpsRequest(
        {
          host: '127.0.0.1',
          port: node.httpsPort,
          path: '/api/hello',
          servername: HOST,
          headers: { host: HOST },
          ca,
          agent: false,
        },
        (res) => {
          const peer = new X509Certificate((res.socket as TLSSocket).getPeerCertificate().raw);
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            text += c;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text, peer }));
        },
      );
      req.on('error', reject);
      req.end();
    });

  before(async () => {
    dns = await startDns({ zones: ['example.test', 'platform.test'] });
    await dns.setRecords('platform.test', [{ name: 'petstore', type: 'A', value: '127.0.0.1' }]);
    await dns.setRecords('example.test', [{ name: 'shop', type: 'CNAME', value: 'petstore.platform.test' }]);
    p = await startPlatformContext('postgres', {
      DNS_SERVERS: dns.servers.join(','),
      CAA_IDENTIFIER: 'pebble.test',
    });
    p.clock.set(Date.now());
    databaseB = openDatabase<PlatformTables>(p.storage.location);
    ctxB = { ...p.ctx, db: databaseB.db, changes: new ChangeFeed() };
    origin = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ url: req.url }));
    });
    await listen(origin);
    const seeded = await seedTeam(p.ctx);
    owner = seeded.owner;
    await createProject(p.ctx, owner, {
      teamId: seeded.team.id,
      slug: 'petstore',
      name: 'P',
      originUrl: `http://127.0.0.1:${portOf(origin)}`,
    });
    await deployProject(p.ctx, owner, 'petstore', {
      document: JSON.stringify({ openapi: '3.0.3', info: { title: 'T', version: '1' }, paths: {} }),
    });
    nodeA = await startNode(p.ctx, 'node-a');
    nodeB = await startNode(ctxB, 'node-b');
    // The name resolves to loopback, and Pebble dials node B's HTTP port there: only B is asked.
    pebble = await startPebble({ httpPort: nodeB.httpPort, dnsServer: dns.servers[0] as string });
    issuer = new AcmeIssuer({
      directoryUrl: pebble.directoryUrl,
      email: 'ops@example.test',
      caPem: pebble.caPem,
      caaIdentities: ['pebble.test'],
      polling: { minDelayMs: 20, maxDelayMs: 200 },
    });
  });

  after(async () => {
    for (const cleanup of cleanups) await cleanup();
    origin?.close();
    await issuer?.close();
    await pebble?.stop();
    await databaseB?.close();
    await p?.close();
    await dns?.stop();
  });

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

    const issued = await obtainDueCertificates(p.ctx, {
      issuer,
      store: new CertificateStore(p.ctx.db, [KEY]),
      challenges: databaseChallenges(p.ctx.db, () => p.clock.now()),
      nodeId: 'node-a',
      leaseMs: 60_000,
    });
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
