import { randomUUID } from 'node:crypto';
import type { CertificateStore } from './certificate-store.ts';
import type { ChallengeStore, Issuer } from './issuer.ts';

/** What the certificate job is given. */
export interface CertificateDeps {
  readonly issuer: Issuer;
  readonly store: CertificateStore;
  readonly challenges: ChallengeStore;
  /**
   * This node, for leases (one order per domain at a time across nodes): stable across restarts,
   * so a restarted node recognises the leases its dead process held.
   */
  readonly nodeId: string;
  /** This process on the node (default: one id per process); stored with the lease. */
  readonly instanceId?: string;
  /** How long a lease lasts after its last heartbeat; then another node may take the order. */
  readonly leaseMs: number;
  /** How often a running order renews its lease (default: a third of `leaseMs`). */
  readonly heartbeatMs?: number;
  /** Where in a CA's renewal window to renew, in [0, 1) (default Math.random); tests fix it. */
  readonly random?: () => number;
}

/** This process's lease instance when the caller names none. */
export const PROCESS_INSTANCE = randomUUID();
