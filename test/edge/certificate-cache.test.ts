import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CertificateCache } from '../../src/edge/index.ts';
import { parseSealingKey } from '../../src/lib/sealed-box.ts';
import {
  CertificateStore,
  type StoredCertificate,
} from '../../src/platform/certificates/certificate-store.ts';
import { InternalIssuer } from '../../src/platform/certificates/internal-issuer.ts';
import { testDialects } from '../support/databases.ts';
import { startPlatformContext, type TestPlatform } from '../support/platform.ts';

const KEY = parseSealingKey(`k1:${Buffer.alloc(32, 4).toString('base64')}`);

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
  });
}
