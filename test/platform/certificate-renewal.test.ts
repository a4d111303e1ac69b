// @peculiar/x509 needs the Reflect metadata API before it loads.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { webcrypto, X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import * as x509 from '@peculiar/x509';
import { parseSealingKey } from '../../src/lib/sealed-box.ts';
import { AcmeIssuer } from '../../src/platform/certificates/acme-issuer.ts';
import { obtainDueCertificates } from '../../src/platform/certificates/certificate-job.ts';
import { CertificateStore, databaseChallenges } from '../../src/platform/certificates/certificate-store.ts';
import { InternalIssuer } from '../../src/platform/certificates/internal-issuer.ts';
import type { Issuer } from '../../src/platform/certificates/issuer.ts';
import { renewalCertId } from '../../src/platform/certificates/renewal.ts';
import type { Actor } from '../../src/platform/context.ts';
import { addDomain } from '../../src/platform/domains/add-domain.ts';
import { verifyDomain } from '../../src/platform/domains/verify-domain.ts';
import { testDialects } from '../support/databases.ts';
import type { TestDns } from '../support/dns.ts';
import { seedProject, seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';
import { dnsEnv, petstoreZones, startZones } from '../support/platform-dns.ts';

const KEY = parseSealingKey(`k1:${Buffer.alloc(32, 5).toString('base64')}`);
const DAY = 86_400_000;
const HOUR = 3_600_000;

describe('ARI certID (RFC 9773 §4.1)', () => {
  it("is base64url(AKI keyIdentifier) '.' base64url(serial), as in the RFC's example", async () => {
    // The RFC's example: AKI 69:88:5B:6B:87:46:40:41:E1:B3:7B:84:7B:A0:AE:2C:DE:01:C8:D4,
    // serial 00:87:65:43:21 (the leading zero kept).
    x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[1]);
    const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
    const keys = await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify']);
    const certificate = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: '0087654321',
      name: 'CN=example',
      notBefore: new Date('2026-01-01T00:00:00Z'),
      notAfter: new Date('2026-04-01T00:00:00Z'),
      signingAlgorithm: algorithm,
      keys,
      extensions: [new x509.AuthorityKeyIdentifierExtension('69885b6b87464041e1b37b847ba0ae2cde01c8d4')],
    });
    assert.equal(renewalCertId(certificate.toString('pem')), 'aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE');
  });
});

/**
 * A CA directory of the test's own: what the ACME issuer reads for renewal information (Pebble 2.4
 * has no `renewalInfo`). `window` answers GET <renewalInfo>/<certID>; null leaves `renewalInfo`
 * out of the directory.
 */
class AriDirectory {
  readonly server: Server;
  window: { start: Date; end: Date; retryAfterSeconds?: number } | null = null;
  status = 200;
  readonly asked: string[] = [];

  constructor() {
    this.server = createServer((request, response) => {
      const base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
      if (request.url === '/directory') {
        response.setHeader('content-type', 'application/json');
        response.end(
          JSON.stringify({
            newNonce: `${base}/nonce`,
            newAccount: `${base}/account`,
            newOrder: `${base}/order`,
            ...(this.window === null ? {} : { renewalInfo: `${base}/renewal-info` }),
          }),
        );
        return;
      }
      const id = /^\/renewal-info\/([\w-]+\.[\w-]+)$/.exec(request.url ?? '')?.[1];
      if (id === undefined || this.window === null) {
        response.statusCode = 404;
        response.end();
        return;
      }
      this.asked.push(id);
      response.statusCode = this.status;
      if (this.window.retryAfterSeconds !== undefined) {
        response.setHeader('retry-after', String(this.window.retryAfterSeconds));
      }
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({
          suggestedWindow: { start: this.window.start.toISOString(), end: this.window.end.toISOString() },
        }),
      );
    });
  }

  async start(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/directory`;
  }
}

for (const dialect of testDialects()) {
  describe(`renewal follows the CA's renewal information, a third of the lifetime without it (${dialect})`, () => {
    let dns: TestDns;
    let p: TestPlatform;
    let owner: Actor;
    let store: CertificateStore;
    let internal: InternalIssuer;
    let caKeyId: string;
    let ari: AcmeIssuer;
    let directoryUrl: string;
    const directory = new AriDirectory();
    // Signs with the internal CA; asks the test's directory for renewal windows, as the ACME
    // issuer asks Let's Encrypt.
    const issuer: Issuer = {
      name: 'acme',
      issue: (request, challenges) => internal.issue(request, challenges),
      renewalWindow: (pem) => ari.renewalWindow(pem),
    };
    const deps = () => ({
      issuer,
      store,
      challenges: databaseChallenges(p.ctx.db, () => p.clock.now()),
      nodeId: 'node-a',
      leaseMs: 60_000,
      random: () => 0.25,
    });
    /** When a third of the lifetime of `hostname`'s stored certificate remains (there must be one). */
    const thirdLeft = async (hostname: string) => {
      const stored = await store.load(hostname);
      assert.ok(stored);
      const lifetime = stored.notAfter.getTime() - stored.notBefore.getTime();
      return new Date(stored.notAfter.getTime() - lifetime / 3).toISOString();
    };
    const job = async (hostname: string) => ({
      ...(await p.ctx.db
        .selectFrom('certificate_jobs')
        .select(['state', 'next_attempt_at', 'renewal_info_at'])
        .where('hostname', '=', hostname)
        .executeTakeFirstOrThrow()),
    });
    /** The certID the RFC defines, worked out here from the CA's SKI and node's serial. */
    const certIdOf = (pem: string) =>
      `${Buffer.from(caKeyId, 'hex').toString('base64url')}.${Buffer.from(new X509Certificate(pem).serialNumber, 'hex').toString('base64url')}`;

    before(async () => {
      dns = await startZones(petstoreZones(['shop', 'plain']));
      p = await startPlatformContext(dialect, dnsEnv(dns));
      store = new CertificateStore(p.ctx.db, [KEY]);
      const ca = await store.internalCa(p.clock.now());
      caKeyId = new x509.X509Certificate(ca.certificatePem).getExtension(x509.SubjectKeyIdentifierExtension)
        ?.keyId as string;
      internal = new InternalIssuer(ca, { now: () => p.clock.now(), lifetimeMs: 90 * DAY });
      directoryUrl = await directory.start();
      ari = new AcmeIssuer({ directoryUrl, email: 'ops@platform.test' });
      const { owner: seeded, team } = await seedTeam(p.ctx);
      owner = seeded;
      await seedProject(p.ctx, owner, {
        teamId: team.id,
        slug: 'petstore',
        name: 'P',
        originUrl: 'http://127.0.0.1:1',
        title: 'T',
      });
    });
    after(async () => {
      await ari?.close();
      directory.server.close();
      await p?.close();
      await dns?.stop();
    });

    it('renews at a time in the window the CA suggests, and asks again after its Retry-After', async () => {
      const issuedAt = p.clock.now().getTime();
      directory.window = {
        start: new Date(issuedAt + 50 * DAY),
        end: new Date(issuedAt + 54 * DAY),
        retryAfterSeconds: 3600,
      };
      await addDomain(p.ctx, owner, 'petstore', 'shop.example.test');
      await verifyDomain(p.ctx, owner, 'petstore', 'shop.example.test');
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps()), ['shop.example.test']);
      const stored = await store.load('shop.example.test');
      assert.ok(stored);
      assert.deepEqual(directory.asked, [certIdOf(stored.certificatePem)]);
      // A quarter into the window (random 0.25), not two thirds into the lifetime (day 60).
      assert.deepEqual(await job('shop.example.test'), {
        state: 'issued',
        next_attempt_at: new Date(issuedAt + 51 * DAY).toISOString(),
        renewal_info_at: new Date(issuedAt + HOUR).toISOString(),
      });

      // Within the Retry-After nothing is asked; after it the window is fetched again, and a chosen
      // time still inside it is kept.
      p.clock.advance(HOUR - 1000);
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps()), []);
      assert.equal(directory.asked.length, 1);
      directory.window = { ...directory.window, retryAfterSeconds: 7200 };
      p.clock.advance(1000);
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps()), []);
      assert.equal(directory.asked.length, 2);
      assert.deepEqual(await job('shop.example.test'), {
        state: 'issued',
        next_attempt_at: new Date(issuedAt + 51 * DAY).toISOString(),
        renewal_info_at: new Date(issuedAt + 3 * HOUR).toISOString(),
      });
    });

    it('renews at once when the CA moves the window into the past (a revocation)', async () => {
      const before = await store.load('shop.example.test');
      assert.ok(before);
      p.clock.advance(2 * HOUR);
      const now = p.clock.now().getTime();
      directory.window = { start: new Date(now - 2 * DAY), end: new Date(now - DAY) };
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps()), ['shop.example.test']);
      const after = await store.load('shop.example.test');
      assert.ok(after);
      assert.notEqual(after.certificatePem, before.certificatePem);
      // The old certificate's window, then the new one's (still in the past: its renewal is now,
      // and no Retry-After came, so the default six hours until the next look).
      assert.deepEqual(directory.asked.slice(-2), [
        certIdOf(before.certificatePem),
        certIdOf(after.certificatePem),
      ]);
      assert.deepEqual(await job('shop.example.test'), {
        state: 'issued',
        next_attempt_at: new Date(now).toISOString(),
        renewal_info_at: new Date(now + 6 * HOUR).toISOString(),
      });
    });

    it('falls back to a third of the lifetime when the CA could not say, and asks again later', async () => {
      directory.status = 503;
      directory.window = { start: new Date(0), end: new Date(1), retryAfterSeconds: 120 };
      p.clock.advance(DAY);
      assert.deepEqual(await obtainDueCertificates(p.ctx, deps()), ['shop.example.test']);
      assert.deepEqual(await job('shop.example.test'), {
        state: 'issued',
        next_attempt_at: await thirdLeft('shop.example.test'),
        renewal_info_at: new Date(p.clock.now().getTime() + 120_000).toISOString(),
      });
      directory.status = 200;
    });

    it('renews when a third of the lifetime remains when the directory offers no renewalInfo', async () => {
      directory.window = null;
      // A CA whose directory lists no renewalInfo (the issuer reads the directory once an hour).
      await ari.close();
      ari = new AcmeIssuer({ directoryUrl, email: 'ops@platform.test' });
      const asked = directory.asked.length;
      await addDomain(p.ctx, owner, 'petstore', 'plain.example.test');
      await verifyDomain(p.ctx, owner, 'petstore', 'plain.example.test');
      assert.ok((await obtainDueCertificates(p.ctx, deps())).includes('plain.example.test'));
      assert.deepEqual(await job('plain.example.test'), {
        state: 'issued',
        next_attempt_at: await thirdLeft('plain.example.test'),
        renewal_info_at: null,
      });
      assert.equal(directory.asked.length, asked);
    });
  });
}
