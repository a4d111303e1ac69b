import assert from 'node:assert/strict';
import { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { TLSSocket } from 'node:tls';
import { CertificateCache } from '../../src/edge/index.ts';
import { parseSealingKey } from '../../src/lib/sealed-box.ts';
import {
  CertificateStore,
  type StoredCertificate,
} from '../../src/platform/certificates/certificate-store.ts';
import { DefaultAddressCertificates } from '../../src/platform/certificates/default-addresses.ts';
import { InternalIssuer } from '../../src/platform/certificates/internal-issuer.ts';
import { testDialects } from '../support/databases.ts';
import { seedSites } from '../support/edge-site.ts';
import { startPlatformContext, type TestPlatform } from '../support/platform.ts';

const KEY = parseSealingKey(`k1:${Buffer.alloc(32, 4).toString('base64')}`);

/** Counts the certificates it issues. */
class CountingAddresses extends DefaultAddressCertificates {
  issued = 0;

  override issue(host: string) {
    this.issued++;
    return super.issue(host);
  }
}

/** The subjectAltName of the certificate a handshake for `servername` would get. */
const presented = (cache: CertificateCache, servername: string) =>
  new Promise<string | undefined>((resolve, reject) => {
    cache.sniCallback(servername, (error, context) => {
      if (error || !context) return reject(error ?? new Error('no context'));
      const socket = new TLSSocket(new Socket(), { isServer: true, secureContext: context });
      resolve(socket.getX509Certificate()?.subjectAltName);
      socket.destroy();
    });
  });

/** The real store; `hold` keeps a finished read from returning, to interleave a change with it. */
class HeldStore extends CertificateStore {
  loads = 0;
  hold: Promise<void> | undefined;
  read: (() => void) | undefined;

  override async load(hostname: string): Promise<StoredCertificate | undefined> {
    this.loads++;
    const stored = await super.load(hostname);
    this.read?.();
    await this.hold;
    return stored;
  }
}

for (const dialect of testDialects()) {
  describe(`the edge's certificate cache (${dialect})`, () => {
    let p: TestPlatform;
    let issuer: InternalIssuer;

    before(async () => {
      p = await startPlatformContext(dialect);
      issuer = new InternalIssuer(await new CertificateStore(p.ctx.db, [KEY]).internalCa(p.clock.now()));
    });

    after(async () => {
      await p?.close();
    });

    it('does not keep an answer read before a change: the next handshake sees the new certificate', async () => {
      const store = new HeldStore(p.ctx.db, [KEY]);
      const cache = new CertificateCache(store, await issuer.issue('platform.test'));
      let release = () => {};
      store.hold = new Promise<void>((resolve) => {
        release = resolve;
      });
      const read = new Promise<void>((resolve) => {
        store.read = resolve;
      });
      // A handshake reads "no certificate"; before its answer lands, one is issued and the change
      // feed clears the cache (another node's NOTIFY can arrive exactly then).
      const during = cache.has('race.example.test');
      await read;
      await store.save('race.example.test', await issuer.issue('race.example.test'), p.clock.now());
      cache.clear();
      release();
      assert.equal(await during, false, 'the handshake in flight gets what it read');
      store.hold = undefined;
      store.read = undefined;
      assert.equal(await cache.has('race.example.test'), true, 'the next one loads again');
      assert.equal(store.loads, 2);
      // Now cached: no further reads.
      assert.equal(await cache.has('race.example.test'), true);
      assert.equal(store.loads, 2);
    });

    it('loads a host once for concurrent handshakes', async () => {
      const store = new HeldStore(p.ctx.db, [KEY]);
      const cache = new CertificateCache(store, await issuer.issue('platform.test'));
      const answers = await Promise.all([1, 2, 3].map(() => cache.has('race.example.test')));
      assert.deepEqual(answers, [true, true, true]);
      assert.equal(store.loads, 1);
    });

    it("issues a default address's certificate once, keeps it across changes, and never counts it as stored", async () => {
      await seedSites(p.ctx, [{ slug: 'shop', name: 'S', originUrl: 'http://127.0.0.1:9', title: 'T' }]);
      const store = new CertificateStore(p.ctx.db, [KEY]);
      const ca = await store.internalCa(p.clock.now());
      const addresses = new CountingAddresses(p.ctx.db, 'platform.test', new InternalIssuer(ca));
      const cache = new CertificateCache(store, await issuer.issue('platform.test'), {
        defaultAddresses: addresses,
      });
      assert.equal(await presented(cache, 'shop.platform.test'), 'DNS:shop.platform.test');
      assert.equal(await presented(cache, 'SHOP.platform.test.'), 'DNS:shop.platform.test');
      cache.clear();
      assert.equal(await presented(cache, 'shop.platform.test'), 'DNS:shop.platform.test');
      assert.equal(addresses.issued, 1, 'a change re-checks the project, not the certificate');
      // Plain HTTP to a default address is not sent to HTTPS.
      assert.equal(await cache.has('shop.platform.test'), false);
      assert.equal(await presented(cache, 'nope.platform.test'), 'DNS:platform.test');
      assert.equal(addresses.issued, 1);

      // Leaves whose renewal point has passed (a lifetime too short to keep) are issued again.
      const shortLived = new CountingAddresses(
        p.ctx.db,
        'platform.test',
        new InternalIssuer(ca, { lifetimeMs: 1_000 }),
      );
      const renewing = new CertificateCache(store, await issuer.issue('platform.test'), {
        defaultAddresses: shortLived,
      });
      await presented(renewing, 'shop.platform.test');
      await presented(renewing, 'shop.platform.test');
      assert.equal(shortLived.issued, 2);
    });
  });
}
