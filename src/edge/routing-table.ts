import type { OriginPolicy } from '../lib/address-policy.ts';
import type { Clock } from '../lib/clock.ts';
import type { PlatformDb } from '../platform/context.ts';
import { type PublishedRoutes, type Route, readPublishedRoutes } from '../platform/publishing/index.ts';

export type { ProjectRoute, RedirectRoute, Route } from '../platform/publishing/index.ts';

/**
 * Hostname → what to serve, for every published project: its default address, its verified
 * custom domains, its redirect-from domains, and its preview deploys' addresses (private: the
 * edge's PreviewGate admits who may see them). Built from the database in one pass; the edge
 * rebuilds it whenever the control plane reports a change, before serving the next request, and
 * when a live primary's certificate expires (no change is published for the passing of time).
 */
export class RoutingTable {
  readonly #db: PlatformDb;
  readonly #platformDomain: string;
  readonly #clock: Clock;
  readonly #originAllowlist: readonly string[];
  #routes = new Map<string, Route>();
  /**
   * Every origin a team was granted, as read with the routes: the edge's connection guard follows
   * it (start-edge.ts), so it never lags behind the routes' own `originRefused`.
   */
  grantedOrigins: OriginPolicy;
  /** Bumped by every change; the table answers only while it was read at the latest one. */
  #changes = 1;
  /** The value of `#changes` when the table in `#routes` started being read. */
  #readAt = 0;
  /** The earliest expiry of a live primary's certificate: the table is stale from then on. */
  #staleAt = Number.POSITIVE_INFINITY;
  #loading: Promise<void> | undefined;

  /** `originAllowlist`: KENNEL_ORIGIN_ALLOWLIST, for the teams granted it (origin-grants.ts). */
  constructor(db: PlatformDb, platformDomain: string, clock: Clock, originAllowlist: readonly string[] = []) {
    this.#db = db;
    this.#platformDomain = platformDomain;
    this.#clock = clock;
    this.#originAllowlist = originAllowlist;
    this.grantedOrigins = { allowlist: originAllowlist };
  }

  /** Marks the table stale: no lookup is answered from it again; the next one reloads it first. */
  invalidate(): void {
    this.#changes++;
  }

  /**
   * The route for `host`. Answered without a promise while the table is fresh (every proxied
   * request asks). After a change, every lookup waits for a table read after that change, also
   * while a reload that started before it is still running.
   */
  lookup(host: string): Route | undefined | Promise<Route | undefined> {
    if (
      this.#readAt !== this.#changes ||
      (this.#staleAt !== Number.POSITIVE_INFINITY && this.#clock.now().getTime() >= this.#staleAt)
    ) {
      return this.#reload().then(() => this.#routes.get(host));
    }
    return this.#routes.get(host);
  }

  async #reload(): Promise<void> {
    // One reload at a time; a change during a reload makes it run again before anyone is answered.
    this.#loading ??= (async () => {
      try {
        do {
          const changes = this.#changes;
          const built: PublishedRoutes = await readPublishedRoutes(
            this.#db,
            this.#platformDomain,
            this.#clock.now(),
            this.#originAllowlist,
          );
          this.#routes = built.routes;
          this.grantedOrigins = built.grantedOrigins;
          this.#staleAt = built.staleAt;
          this.#readAt = changes;
        } while (this.#readAt !== this.#changes);
      } finally {
        this.#loading = undefined;
      }
    })();
    await this.#loading;
  }
}
