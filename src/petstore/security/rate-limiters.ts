import type { Clock } from '../../lib/clock.ts';
import type { Database } from '../../storage/index.ts';
import type { PetstoreTables } from '../db-schema.ts';
import type { PetstoreLimits } from '../limits.ts';
import { postgresWindowCounts } from './postgres-window-counts.ts';
import { FixedWindowLimiter, type RateLimiter } from './rate-limiter.ts';
import { SharedWindowLimiter } from './shared-window-limiter.ts';

/**
 * Where rate limits are counted: `node`, in each process's memory (N processes allow N × the
 * quota); `cluster`, in one count per caller that every process on the same PostgreSQL database
 * shares; `auto`, cluster on PostgreSQL and node on SQLite (one process per file anyway).
 */
export type RateLimitScope = 'auto' | 'node' | 'cluster';

/**
 * A claim answered later than this is an outage: the request is decided locally. Generous, as a
 * busy pool can keep a claim waiting and a false outage lets each node count alone for OUTAGE_MS.
 */
const CLAIM_TIMEOUT_MS = 2_000;
/** During an outage a node counts alone this long before asking the database again. */
const OUTAGE_MS = 5_000;

export interface RateLimiters {
  readonly perKey: RateLimiter;
  readonly perAddress: RateLimiter;
}

/** The per-key and per-address limiters of the scope asked for. */
export function createRateLimiters(
  scope: RateLimitScope,
  database: Database<PetstoreTables>,
  clock: Clock,
  limits: PetstoreLimits,
  log: { warn(details: object, message: string): void },
): RateLimiters {
  const shared = scope === 'cluster' || (scope === 'auto' && database.dialect === 'postgres');
  if (!shared) {
    return {
      perKey: new FixedWindowLimiter(limits.perKey, clock),
      perAddress: new FixedWindowLimiter(limits.perAddress, clock),
    };
  }
  const counts = postgresWindowCounts(database);
  const options = (name: string) => ({
    name,
    maxLease: limits.rateLimitLease,
    claimTimeoutMs: CLAIM_TIMEOUT_MS,
    outageMs: OUTAGE_MS,
    onOutage: (error: unknown) =>
      log.warn(
        { err: error, policy: name },
        `the shared rate-limit count is unreachable: this process counts ${name} limits alone for ${OUTAGE_MS / 1000} s`,
      ),
    onPurgeError: (error: unknown) =>
      log.warn({ err: error, policy: name }, 'forgetting old rate-limit windows failed; retried next window'),
  });
  return {
    perKey: new SharedWindowLimiter(limits.perKey, counts, clock, options('key')),
    perAddress: new SharedWindowLimiter(limits.perAddress, counts, clock, options('address')),
  };
}
