import type { Kysely } from 'kysely';
import type { PlatformConfig } from '../config/index.ts';
import type { Clock } from '../lib/clock.ts';
import type { SealingKey } from '../lib/sealed-box.ts';
import type { Dialect } from '../storage/index.ts';
import type { ChangeFeed } from './changes.ts';
import type { PlatformTables } from './db-schema.ts';
import type { DnsResolver } from './dns/dns-check.ts';

export type PlatformDb = Kysely<PlatformTables>;

/** What control-plane operations are given. */
export interface PlatformContext {
  readonly db: PlatformDb;
  readonly dialect: Dialect;
  readonly clock: Clock;
  readonly config: PlatformConfig;
  /** Resolves through the configured DNS servers; domain checks go through it and nothing else. */
  readonly resolver: DnsResolver;
  /** Committed changes that affect serving, for the edge. */
  readonly changes: ChangeFeed;
  /**
   * Webhooks (docs/webhooks.md): the keys sealing endpoint signing secrets (the certificate
   * keys) and the delivery worker's wake-up, called after a transaction that enqueued a message
   * commits. Without it, endpoints cannot be set and events wait for the worker's next poll.
   */
  readonly webhooks?: PlatformWebhooks;
}

export interface PlatformWebhooks {
  readonly keys: readonly SealingKey[];
  wake(): void;
}

/** Who is asking: every management action checks it against what they own. */
export interface Actor {
  readonly userId: number;
  readonly email: string;
  readonly isAdmin: boolean;
}
