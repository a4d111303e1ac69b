import type { Clock } from '../../lib/clock.ts';
import type { StoreContext } from '../store/context.ts';
import { type ApiKey, createKey, findLiveKey, listKeys, revokeKey, type Scope } from '../store/keys.ts';

interface CacheEntry {
  readonly key: ApiKey;
  readonly freshUntil: number;
}

/**
 * API keys with an in-memory cache in front of the database: a known key costs one Map lookup by
 * its text (no hash on the hot path). A key revoked through this process leaves the cache at
 * once; a key revoked through another process on the same database is dropped once its entry is
 * older than `cacheMs` (docs/decisions/petstore-access.md). Unknown keys are not cached, so a key created
 * elsewhere works at once.
 */
export class KeyService {
  readonly #ctx: StoreContext;
  readonly #clock: Clock;
  readonly #cacheMs: number;
  readonly #cache = new Map<string, CacheEntry>();

  constructor(ctx: StoreContext, options: { cacheMs: number }) {
    this.#ctx = ctx;
    this.#clock = ctx.clock;
    this.#cacheMs = options.cacheMs;
  }

  /** The cached live key for this secret, when the cache can answer without the database. */
  cached(secret: string): ApiKey | undefined {
    const entry = this.#cache.get(secret);
    if (entry === undefined) return undefined;
    if (entry.freshUntil <= this.#clock.now().getTime()) return undefined;
    return entry.key;
  }

  /** The key the guard resolved for this request's secret (handlers run after the guard). */
  known(secret: string): ApiKey | undefined {
    return this.#cache.get(secret)?.key;
  }

  /** The live key for this secret, from the cache or the database. */
  async resolve(secret: string): Promise<ApiKey | undefined> {
    const cached = this.cached(secret);
    if (cached) return cached;
    const key = await findLiveKey(this.#ctx, secret);
    if (key) this.#cache.set(secret, { key, freshUntil: this.#clock.now().getTime() + this.#cacheMs });
    else this.#cache.delete(secret);
    return key;
  }

  create(input: { name: string; scopes: readonly Scope[] }) {
    return createKey(this.#ctx, input);
  }

  list() {
    return listKeys(this.#ctx);
  }

  async revoke(id: number): Promise<ApiKey> {
    const key = await revokeKey(this.#ctx, id);
    for (const [secret, entry] of this.#cache) if (entry.key.id === id) this.#cache.delete(secret);
    return key;
  }
}
