import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { Agent as HttpsAgent } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { connect } from 'node:tls';
import { CertificateCache, createTlsServer, type EdgeTlsServer } from '../../src/edge/index.ts';
import { addDomain } from '../../src/platform/domains/add-domain.ts';
import { removeDomain } from '../../src/platform/domains/remove-domain.ts';
import { verifyDomain } from '../../src/platform/domains/verify-domain.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import type { TestDns } from '../support/dns.ts';
import { startTlsEdgeSite, type TlsEdgeSite } from '../support/edge.ts';
import { type LoopbackServer, placeChallenge, recordingOrigin, startSiteDns } from '../support/edge-site.ts';
import { tlsGet } from '../support/edge-tls.ts';
import { requestAs } from '../support/http.ts';

for (const dialect of testDialects()) {
  describe(`the edge over TLS: SNI certificates, HTTPS redirect, challenges, resumption (${dialect})`, () => {
    let dns: TestDns;
    let origin: LoopbackServer;
    let s: TlsEdgeSite;
    let httpsB: EdgeTlsServer;
    let httpsBPort: number;
    const obtain = () => s.obtain({ nodeId: 'test' });

    const get = (host: string, path: string, options: { servername?: string; agent?: HttpsAgent } = {}) =>
      tlsGet(s.edge.httpsPort, host, path, { ca: s.certificates.rootPem, ...options });

    const plain = (host: string, path: string) => requestAs(s.edge.httpPort, host, path);

    before(async () => {
      dns = await startSiteDns('shop');
      origin = await recordingOrigin({
        reply: ({ url, headers }) => ({ url, proto: headers['x-forwarded-proto'] }),
      });
      s = await startTlsEdgeSite(dialect, {
        env: { DNS_SERVERS: dns.servers.join(',') },
        // TLS clients check validity against the real time: certificates are issued for now.
        now: true,
        projects: [{ slug: 'petstore', name: 'P', originUrl: origin.url, title: 'T' }],
        responseTimeoutMs: 2000,
      });
      const { store, defaultCertificate } = s.certificates;
      // A second edge node: its own cache, the same store and ticket keys.
      httpsB = createTlsServer({
        certificates: new CertificateCache(store, defaultCertificate),
        defaultCertificate,
        ticketKeys: await store.ticketKeys(s.p.clock.now()),
        handle: s.edge.handler.handle,
      });
      await new Promise<void>((resolve) => httpsB.listen(0, '127.0.0.1', resolve));
      httpsBPort = (httpsB.address() as AddressInfo).port;
    });

    after(async () => {
      httpsB?.close();
      await closeAll(s, origin, dns);
    });

    it('serves a verified domain over HTTPS with its own certificate, chosen by SNI, without a restart', async () => {
      await addDomain(s.p.ctx, s.owner, 'petstore', 'shop.example.test');
      await verifyDomain(s.p.ctx, s.owner, 'petstore', 'shop.example.test');
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
      assert.equal(redirect.headers.location, `https://shop.example.test:${s.edge.httpsPort}/api/items?a=1`);
      await placeChallenge(s.p, 'shop.example.test', 'tok123', 'tok123.thumbprint');
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
        const stored = await s.certificates.store.load('shop.example.test');
        assert.ok(stored);
        assert.equal(new X509Certificate(stored.certificatePem).serialNumber, before);
        s.p.clock.set(
          stored.notAfter.getTime() - (stored.notAfter.getTime() - stored.notBefore.getTime()) / 3 + 1000,
        );
        assert.deepEqual(await obtain(), ['shop.example.test']);
        const renewed = await s.certificates.store.load('shop.example.test');
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
              ca: s.certificates.rootPem,
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
      const first = await handshake(s.edge.httpsPort);
      assert.equal(first.reused, false);
      const second = await handshake(httpsBPort, first.session);
      assert.equal(second.reused, true);
    });

    it('stops serving a removed domain at once', async () => {
      await removeDomain(s.p.ctx, s.owner, 'petstore', 'shop.example.test');
      await assert.rejects(get('shop.example.test', '/api/x'), /Hostname\/IP does not match/);
      const viaDefault = await get('shop.example.test', '/api/x', { servername: 'platform.test' });
      assert.equal(viaDefault.status, 404);
      assert.equal((JSON.parse(viaDefault.text) as { code: string }).code, 'host_not_found');
    });
  });
}
