import type { SealingKey } from '../../src/lib/sealed-box.ts';
import { CertificateStore, databaseChallenges } from '../../src/platform/certificates/certificate-store.ts';
import { InternalIssuer } from '../../src/platform/certificates/internal-issuer.ts';
import type { CertificateRequest, IssuedChain, Issuer } from '../../src/platform/certificates/issuer.ts';
import { issueDueCertificates, TEST_SEALING_KEY, type TestPlatform } from './platform.ts';

/**
 * The real internal CA of a test platform, on its clock: the certificate store (keys sealed with
 * `key`), the issuer, and `issueDue(nodeId)`, the certificate job once (the hostnames issued).
 */
export async function internalCertificates(
  p: Pick<TestPlatform, 'ctx' | 'clock'>,
  key: SealingKey = TEST_SEALING_KEY,
) {
  const store = new CertificateStore(p.ctx.db, [key]);
  const issuer = new InternalIssuer(await store.internalCa(p.clock.now()), { now: () => p.clock.now() });
  return {
    store,
    issuer,
    issueDue: (nodeId?: string) => issueDueCertificates(p, { issuer, store, ...(nodeId ? { nodeId } : {}) }),
  };
}

/**
 * A real issuer behind a gate: the next order for the hostname `hold` names starts at once (so the
 * test knows the order is in flight: `started`) and returns only when the test calls `release`.
 * Not a mock: the certificate is the inner issuer's. `calls` counts the orders placed.
 */
export class GatedIssuer implements Issuer {
  readonly name: string;
  readonly preCheck?: Issuer['preCheck'];
  readonly #inner: Issuer;
  calls = 0;
  #held: string | null = null;
  #open: () => void = () => {};
  #gate: Promise<void> = Promise.resolve();
  #started: () => void = () => {};
  started: Promise<void> = Promise.resolve();
  constructor(inner: Issuer, name = 'internal', preCheck?: Issuer['preCheck']) {
    this.#inner = inner;
    this.name = name;
    if (preCheck) this.preCheck = preCheck;
  }
  /** The next order for `hostname` waits until `release()`; `started` resolves when it is in flight. */
  hold(hostname: string): void {
    this.#held = hostname;
    this.#gate = new Promise((resolve) => {
      this.#open = resolve;
    });
    this.started = new Promise((resolve) => {
      this.#started = resolve;
    });
  }
  release(): void {
    this.#held = null;
    this.#open();
    this.#started();
  }
  async issue(request: CertificateRequest): Promise<IssuedChain> {
    this.calls++;
    if (request.hostname === this.#held) {
      this.#started();
      await this.#gate;
    }
    return this.#inner.issue(request, databaseChallenges as never);
  }
}
