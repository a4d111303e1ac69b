import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, type TLSSocket } from 'node:tls';
import type { AcmeIssuer } from '../../src/platform/certificates/acme-issuer.ts';
import { databaseChallenges } from '../../src/platform/certificates/certificate-store.ts';
import { PlatformCertificate } from '../../src/platform/certificates/platform-certificate.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import { startDns, type TestDns } from '../support/dns.ts';
import { startTlsEdgeSite, type TlsEdgeSite } from '../support/edge.ts';
import { type LoopbackServer, pebbleIssuer, placeChallenge, startOrigin } from '../support/edge-site.ts';
import { requestAs, secureRequestAs } from '../support/http.ts';
import { startPebble, type TestPebble } from '../support/pebble.ts';

const OPENAPI = '/api/v1/openapi.json';

/**
 * Issue 13: the platform's own site (the platform domain) gets its certificate from the ACME
 * issuer (Pebble here), and from then on its HTTP is sent to HTTPS and its HTTPS carries HSTS.
 */
for (const dialect of testDialects()) {
  describe(`the platform domain over HTTPS with an ACME certificate (${dialect})`, () => {
    let dns: TestDns;
    let origin: LoopbackServer;
    let s: TlsEdgeSite;
    let pebble: TestPebble;
    let issuer: AcmeIssuer;
    const platformCertificate = (hostname = 'platform.test', nodeId = 'edge-1') =>
      new PlatformCertificate({
        db: s.p.ctx.db,
        clock: s.p.clock,
        changes: s.p.ctx.changes,
        hostname,
        issuer,
        store: s.certificates.store,
        challenges: databaseChallenges(s.p.ctx.db, () => s.p.clock.now()),
        nodeId,
        leaseMs: 60_000,
      });

    const get = (host: string, path: string, ca: string) =>
      secureRequestAs(s.edge.httpsPort, host, path, { ca });

    const plain = (host: string, path: string) => requestAs(s.edge.httpPort, host, path);

    /** A handshake without SNI (the host is an address), trusting only `ca`. */
    const withoutSni = (ca: string) =>
      new Promise<{ authorized: boolean; subjectAltName: string | undefined }>((resolve, reject) => {
        const socket: TLSSocket = connect(
          { host: '127.0.0.1', port: s.edge.httpsPort, ca, checkServerIdentity: () => undefined },
          () => {
            const answer = {
              authorized: socket.authorized,
              subjectAltName: socket.getPeerX509Certificate()?.subjectAltName,
            };
            socket.end();
            resolve(answer);
          },
        );
        socket.on('error', reject);
      });

    before(async () => {
      dns = await startDns({ zones: ['platform.test'] });
      await dns.setRecords('platform.test', [
        { name: '@', type: 'A', value: '127.0.0.1' },
        { name: 'petstore', type: 'A', value: '127.0.0.1' },
      ]);
      origin = await startOrigin((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
      s = await startTlsEdgeSite(dialect, {
        env: { DNS_SERVERS: dns.servers.join(',') },
        now: true,
        projects: [{ slug: 'petstore', name: 'P', originUrl: origin.url, title: 'T' }],
      });
      pebble = await startPebble({ httpPort: s.edge.httpPort, dnsServer: dns.servers[0] as string });
      issuer = pebbleIssuer(pebble);
    });

    after(() => closeAll(s, issuer, pebble, origin, dns));

    it('serves the platform over plain HTTP, without HSTS, while it has only the internal default certificate', async () => {
      assert.equal((await plain('platform.test', OPENAPI)).status, 200);
      const https = await get('platform.test', OPENAPI, s.certificates.rootPem);
      assert.equal(https.status, 200);
      assert.equal(https.headers['strict-transport-security'], undefined);
    });

    it('orders the platform domain its certificate from the ACME issuer, once, and serves it by SNI and without SNI', async () => {
      const certificate = platformCertificate();
      assert.equal(await certificate.pass(), 'issued');
      const stored = await s.certificates.store.load('platform.test');
      assert.equal(stored?.issuer, 'acme');
      // Not due again until a third of its lifetime remains.
      assert.equal(await certificate.pass(), 'current');
      assert.equal(await certificate.pass(), 'current');
      assert.equal(await platformCertificate('platform.test', 'edge-2').pass(), 'current');

      const root = await pebble.rootPem();
      const https = await get('platform.test', `${OPENAPI}?a=1`, root);
      assert.equal(https.status, 200);
      assert.equal(https.headers['strict-transport-security'], 'max-age=31536000');
      // Clients sending no SNI get it too, once the listener has picked it up.
      const deadline = Date.now() + 5_000;
      let bare = await withoutSni(root).catch(() => undefined);
      while (bare?.authorized !== true && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        bare = await withoutSni(root).catch(() => undefined);
      }
      assert.deepEqual(bare, { authorized: true, subjectAltName: 'DNS:platform.test' });
    });

    it('then sends the platform’s plain HTTP to HTTPS (308, path and query kept), except ACME challenges', async () => {
      const redirect = await plain('platform.test', `${OPENAPI}?a=1&b=2`);
      assert.equal(redirect.status, 308);
      assert.equal(redirect.headers.location, `https://platform.test:${s.edge.httpsPort}${OPENAPI}?a=1&b=2`);
      assert.equal(redirect.headers['strict-transport-security'], undefined, 'HSTS is sent over HTTPS only');
      await placeChallenge(s.p, 'platform.test', 'tok-platform', 'tok-platform.print');
      const challenge = await plain('platform.test', '/.well-known/acme-challenge/tok-platform');
      assert.deepEqual([challenge.status, challenge.text], [200, 'tok-platform.print']);
      // Projects' default addresses are not covered (no includeSubDomains): their HTTP stays served.
      assert.equal((await plain('petstore.platform.test', '/api/pets')).status, 200);
    });

    it('backs off after a failed order, and leaves an order another node holds alone', async () => {
      // No DNS record: Pebble cannot validate.
      const failing = platformCertificate('nowhere.platform.test');
      await assert.rejects(
        failing.pass(),
        /platform domain's certificate \(nowhere\.platform\.test\) was not issued/,
      );
      assert.equal(await failing.pass(), 'waiting');
      assert.equal(await s.certificates.store.load('nowhere.platform.test'), undefined);

      await s.p.ctx.db
        .insertInto('platform_keys')
        .values({
          name: 'platform_certificate_lease',
          value: `${new Date(s.p.clock.now().getTime() + 60_000).toISOString()} edge-9`,
          created_at: s.p.clock.now().toISOString(),
        })
        .execute();
      assert.equal(await platformCertificate('other.platform.test').pass(), 'leased');
    });
  });
}
