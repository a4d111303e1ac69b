import { backoffDelay } from '../../lib/backoff.ts';
import type { Clock } from '../../lib/clock.ts';
import type { ChangeFeed } from '../changes.ts';
import type { PlatformDb } from '../context.ts';
import { obtainCertificate } from './certificate-request.ts';
import { CERTIFICATE_BACKOFF } from './certificate-states.ts';
import type { CertificateStore } from './certificate-store.ts';
import { type ChallengeStore, type Issuer, IssuerError } from './issuer.ts';
import { planRenewal } from './renewal.ts';

export interface PlatformCertificateDeps {
  readonly db: PlatformDb;
  readonly clock: Clock;
  readonly changes: ChangeFeed;
  /** The platform domain (the dashboard and the management API). */
  readonly hostname: string;
  /** The ACME issuer: with the internal CA the platform keeps its in-memory default certificate. */
  readonly issuer: Issuer;
  readonly store: CertificateStore;
  readonly challenges: ChallengeStore;
  readonly nodeId: string;
  /** How long an order may run before another node may take it over. */
  readonly leaseMs: number;
}

/** The row of `platform_keys` that one node holds while it orders (`<until ISO> <node>`, not sealed). */
const LEASE = 'platform_certificate_lease';

/**
 * The platform domain's own certificate from the ACME issuer: ordered at start, renewed in the
 * CA's renewal window (RFC 9773) or else when a third of its lifetime remains, stored like a custom domain's (so the edge serves it by SNI and
 * as the fallback, and every node shares it). The platform domain has no row in `domains`, so it
 * has no certificate job: this is its job, with a lease in `platform_keys` (one order across
 * nodes) and the job's back-off after a failure, kept in memory (a restart retries at once).
 */
export class PlatformCertificate {
  readonly #deps: PlatformCertificateDeps;
  #attempts = 0;
  /** Epoch ms before which a pass does nothing (renewal not due, or backing off). */
  #nextAttemptAt = 0;

  constructor(deps: PlatformCertificateDeps) {
    this.#deps = deps;
  }

  /** ACME CAs refuse names under `.localhost` (RFC 6761): nothing is ordered for those. */
  static orderable(hostname: string): boolean {
    return hostname !== 'localhost' && !hostname.endsWith('.localhost');
  }

  /**
   * One pass (run with the certificate job's): orders when there is no certificate from this
   * issuer or its renewal is due. Throws the order's failure (the next attempt waits the back-off:
   * `waiting`); `current` when nothing is due, `leased` when another node is ordering.
   */
  async pass(): Promise<'issued' | 'current' | 'waiting' | 'leased'> {
    const { clock, hostname, issuer, store } = this.#deps;
    const now = clock.now().getTime();
    if (now < this.#nextAttemptAt) return this.#attempts > 0 ? 'waiting' : 'current';
    const stored = await store.load(hostname);
    if (stored && stored.issuer === issuer.name) {
      const renewAt = (await planRenewal(issuer, stored, clock.now(), Math.random)).renewAt.getTime();
      if (now < renewAt) {
        this.#attempts = 0;
        this.#nextAttemptAt = renewAt;
        return 'current';
      }
    }
    const lease = await this.#claim(now);
    if (lease === undefined) return 'leased';
    try {
      const certificate = await obtainCertificate(issuer, hostname, this.#deps.challenges);
      await store.save(hostname, certificate, clock.now());
      this.#attempts = 0;
      this.#nextAttemptAt = (
        await planRenewal(issuer, certificate, clock.now(), Math.random)
      ).renewAt.getTime();
      // Every node's edge reloads: SNI for the platform domain and the fallback certificate.
      this.#deps.changes.publish({ kind: 'certificates', projectId: 0 });
      return 'issued';
    } catch (error) {
      this.#attempts++;
      const retryAfter = error instanceof IssuerError ? (error.retryAfterMs ?? 0) : 0;
      this.#nextAttemptAt =
        clock.now().getTime() + Math.max(retryAfter, backoffDelay(this.#attempts, CERTIFICATE_BACKOFF));
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(
        `the platform domain's certificate (${hostname}) was not issued: ${message}; next attempt at ${new Date(this.#nextAttemptAt).toISOString()}`,
        { cause: error },
      );
    } finally {
      await this.#deps.db
        .deleteFrom('platform_keys')
        .where('name', '=', LEASE)
        .where('value', '=', lease)
        .execute();
    }
  }

  /** The lease's value when this node holds it now, else undefined (another node orders). */
  async #claim(now: number): Promise<string | undefined> {
    const { db, nodeId, leaseMs } = this.#deps;
    const value = `${new Date(now + leaseMs).toISOString()} ${nodeId}`;
    const holder = () =>
      db.selectFrom('platform_keys').select('value').where('name', '=', LEASE).executeTakeFirst();
    const current = await holder();
    if (current) {
      const until = Date.parse(current.value.split(' ')[0] ?? '');
      if (until > now) return undefined;
      const taken = await db
        .updateTable('platform_keys')
        .set({ value })
        .where('name', '=', LEASE)
        .where('value', '=', current.value)
        .executeTakeFirst();
      return taken.numUpdatedRows === 1n ? value : undefined;
    }
    await db
      .insertInto('platform_keys')
      .values({ name: LEASE, value, created_at: new Date(now).toISOString() })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    return (await holder())?.value === value ? value : undefined;
  }
}
