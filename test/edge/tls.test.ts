import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { connect, type TLSSocket } from 'node:tls';
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
import { obtainDueCertificates } from '../../src/platform/certificates/certificate-job.ts';
import { CertificateStore, databaseChallenges } from '../../src/platform/certificates/certificate-store.ts';
import { InternalIssuer } from '../../src/platform/certificates/internal-issuer.ts';
import type { Actor } from '../../src/platform/context.ts';
import { addDomain } from '../../src/platform/domains/add-domain.ts';
import { removeDomain } from '../../src/platform/domains/remove-domain.ts';
import { verifyDomain } from '../../src/platform/domains/verify-domain.ts';
import { deployProject } from '../../src/platform/projects/deploys.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import { testDialects } from '../support/databases.ts';
import { startDns, type TestDns } from '../support/dns.ts';
import { requestAs } from '../support/http.ts';
import { seededOriginGuard } from '../support/origins.ts';
import { seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';

const KEY = parseSealingKey(`k1:${Buffer.alloc(32, 9).toString('base64')}`);

const port = (server: Server | HttpsServer) => (server.address() as AddressInfo).port;
const listen = (server: Server | HttpsServer) =>
  new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));

for (const dialect of testDialects()) {
  describe(`the edge over TLS: SNI certificates, HTTPS redirect, challenges, resumption (${dialect})`, () => {
    let dns: TestDns;
    let p: TestPlatform;
    let owner: Actor;
    let store: CertificateStore;
    let issuer: InternalIssuer;
    let rootPem: string;
    let management: FastifyInstance;
    let origin: Server;
    let http: Server;
    let https: HttpsServer;
    let httpsB: HttpsServer;
    let proxy: OriginProxy;
    let handler: ReturnType<typeof createEdgeHandler>;
    const challenges = () => databaseChallenges(p.ctx.db, () => p.clock.now());
    const obtain = () =>
      obtainDueCertificates(p.ctx, {
        issuer,
        store,
        challenges: challenges(),
        nodeId: 'test',
        leaseMs: 60_000,
      });

    const get = (host: string, path: string, options: { servername?: string; agent?: HttpsAgent } = {}) =>
      new Promise<{
        status: number;
        headers: Record<string, unknown>;
        text: string;
        peer: X509Certificate;
        socket: TLSSocket;
      }>((resolve, reject) => {
        const req = httpsRequest(
          {
            host: '127.0.0.1',
            port: port(https),
            path,
            servername: options.servername ?? host,
            headers: { host },
            ca: rootPem,
            agent: options.agent ?? false,
          },
          (res) => {
            // Read now: a keep-alive agent takes the socket back once the response ends.
            const socket = res.socket as TLSSocket;
            const peer = new X509Certificate(socket.getPeerCertificate(true).raw);
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => {
              text += c;
            });
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, headers: res.headers, text, peer, socket }),
            );
          },
        );
        req.on('error', reject);
        req.end();
      });

    const plain = (host: string, path: string) => requestAs(port(http), host, path);

    before(async () => {
      dns = await startDns({ zones: ['example.test', 'platform.test'] });
      await dns.setRecords('platform.test', [{ name: 'petstore', type: 'A', value: '127.0.0.1' }]);
      await dns.setRecords('example.test', [
        { name: 'shop', type: 'CNAME', value: 'petstore.platform.test' },
      ]);
      p = await startPlatformContext(dialect, { DNS_SERVERS: dns.servers.join(',') });
      // TLS clients check validity against the real time: certificates are issued for now.
      p.clock.set(Date.now());
      store = new CertificateStore(p.ctx.db, [KEY]);
      const ca = await store.internalCa(p.clock.now());
      rootPem = ca.certificatePem;
      issuer = new InternalIssuer(ca);
      origin = createServer((req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ url: req.url, proto: req.headers['x-forwarded-proto'] }));
      });
      await listen(origin);
      const seeded = await seedTeam(p.ctx);
      owner = seeded.owner;
      const team = seeded.team;
      await createProject(p.ctx, owner, {
        teamId: team.id,
        slug: 'petstore',
        name: 'P',
        originUrl: `http://127.0.0.1:${port(origin)}`,
      });
      await deployProject(p.ctx, owner, 'petstore', {
        document: JSON.stringify({ openapi: '3.0.3', info: { title: 'T', version: '1' }, paths: {} }),
      });

      management = buildPlatformApp(p.ctx);
      await management.ready();
      proxy = new OriginProxy({
        guard: await seededOriginGuard(p.ctx),
        connectTimeoutMs: 1000,
        responseTimeoutMs: 2000,
      });
      const defaultCertificate = await issuer.issue('platform.test');
      const certificates = new CertificateCache(store, defaultCertificate);
      http = createServer();
      await listen(http);
      const ticketKeys = await store.ticketKeys(p.clock.now());
      https = createTlsServer({ certificates, defaultCertificate, ticketKeys, handle: () => {} });
      await listen(https);
      handler = createEdgeHandler({
        ctx: p.ctx,
        platformApp: management,
        proxy,
        certificates,
        challenges: challenges(),
        httpsPort: port(https),
      });
      http.on('request', handler.handle);
      https.removeAllListeners('request');
      https.on('request', handler.handle);
      // A second edge node: its own cache, the same store and ticket keys.
      httpsB = createTlsServer({
        certificates: new CertificateCache(store, defaultCertificate),
        defaultCertificate,
        ticketKeys: await store.ticketKeys(p.clock.now()),
        handle: handler.handle,
      });
      await listen(httpsB);
    });

    after(async () => {
      http?.close();
      https?.close();
      httpsB?.close();
      origin?.close();
      handler?.close();
      await proxy?.close();
      await management?.close();
      await p?.close();
      await dns?.stop();
    });

    it('serves a verified domain over HTTPS with its own certificate, chosen by SNI, without a restart', async () => {
      await addDomain(p.ctx, owner, 'petstore', 'shop.example.test');
      await verifyDomain(p.ctx, owner, 'petstore', 'shop.example.test');
      // Before the certificate: the default one (the browser's "not private" warning).
      await assert.rejects(
        get('shop.example.test', '/api/x'),
        /Hostname\/IP does not match|ERR_TLS_CERT_ALTNAME_INVALID/,
      );
      assert.deepEqual(await obtain(), ['shop.example.test']);
      const answer = await get('shop.example.test', '/api/items?a=1');
      assert.equal(answer.status, 200);
      assert.deepEqual(JSON.parse(answer.text), { url: '/items?a=1', proto: 'https' });
      assert.equal(answer.peer.subjectAltName, 'DNS:shop.example.test');
    });

    it('redirects HTTP to HTTPS for hosts with a certificate, but answers ACME challenges over HTTP', async () => {
      const redirect = await plain('shop.example.test', '/api/items?a=1');
      assert.equal(redirect.status, 308);
      assert.equal(redirect.headers.location, `https://shop.example.test:${port(https)}/api/items?a=1`);
      await challenges().put('tok123', 'tok123.thumbprint', 'shop.example.test');
      const challenge = await plain('shop.example.test', '/.well-known/acme-challenge/tok123');
      assert.deepEqual([challenge.status, challenge.text], [200, 'tok123.thumbprint']);
      assert.equal((await plain('shop.example.test', '/.well-known/acme-challenge/unknown')).status, 404);
      // A host without a certificate stays on HTTP.
      assert.equal((await plain('petstore.platform.test', '/api/x')).status, 200);
    });

    it('swaps in a renewed certificate for new connections without dropping open ones', async () => {
      // One keep-alive HTTP/1.1 connection, opened before the renewal.
      const keepAlive = new HttpsAgent({ keepAlive: true, maxSockets: 1 });
      try {
        const first = await get('shop.example.test', '/api/x', { agent: keepAlive });
        const before = first.peer.serialNumber;
        const stored = await store.load('shop.example.test');
        assert.ok(stored);
        assert.equal(new X509Certificate(stored.certificatePem).serialNumber, before);
        p.clock.set(
          stored.notAfter.getTime() - (stored.notAfter.getTime() - stored.notBefore.getTime()) / 3 + 1000,
        );
        assert.deepEqual(await obtain(), ['shop.example.test']);
        const renewed = await store.load('shop.example.test');
        assert.ok(renewed);
        const renewedCertificate = new X509Certificate(renewed.certificatePem);
        assert.notEqual(renewedCertificate.serialNumber, before);
        assert.ok(renewed.notAfter.getTime() >= stored.notAfter.getTime());

        // The open connection keeps serving requests, still on the certificate it was opened with.
        for (const path of ['/api/after-1', '/api/after-2']) {
          const again = await get('shop.example.test', path, { agent: keepAlive });
          assert.equal(again.socket, first.socket, 'the same TLS connection');
          assert.equal(again.status, 200);
          assert.deepEqual(JSON.parse(again.text), { url: path.slice(4), proto: 'https' });
          assert.equal(again.peer.serialNumber, before);
        }
        // A new connection gets the renewed certificate.
        const fresh = await get('shop.example.test', '/api/x');
        assert.notEqual(fresh.socket, first.socket);
        assert.equal(fresh.peer.serialNumber, renewedCertificate.serialNumber);
        assert.equal(fresh.peer.validTo, renewedCertificate.validTo);
      } finally {
        keepAlive.destroy();
      }
    });

    it('resumes a TLS session on another edge node through the shared ticket keys', async () => {
      const handshake = (serverPort: number, session?: Buffer) =>
        new Promise<{ reused: boolean; session: Buffer | undefined }>((resolve, reject) => {
          let ticket: Buffer | undefined;
          const socket = connect(
            {
              host: '127.0.0.1',
              port: serverPort,
              servername: 'shop.example.test',
              ca: rootPem,
              session,
              maxVersion: 'TLSv1.2',
            },
            () => {
              const reused = socket.isSessionReused();
              ticket = socket.getSession();
              socket.end();
              resolve({ reused, session: ticket });
            },
          );
          socket.on('error', reject);
        });
      const first = await handshake(port(https));
      assert.equal(first.reused, false);
      const second = await handshake(port(httpsB), first.session);
      assert.equal(second.reused, true);
    });

    it('stops serving a removed domain at once', async () => {
      await removeDomain(p.ctx, owner, 'petstore', 'shop.example.test');
      await assert.rejects(get('shop.example.test', '/api/x'), /Hostname\/IP does not match/);
      const viaDefault = await get('shop.example.test', '/api/x', { servername: 'platform.test' });
      assert.equal(viaDefault.status, 404);
      assert.equal((JSON.parse(viaDefault.text) as { code: string }).code, 'host_not_found');
    });
  });
}
