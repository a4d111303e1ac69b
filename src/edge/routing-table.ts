import type { Clock } from '../lib/clock.ts';
import type { PlatformDb } from '../platform/context.ts';
import { servedStates } from '../platform/domains/domain-store.ts';

export interface ProjectRoute {
  readonly kind: 'project';
  readonly projectId: number;
  readonly slug: string;
  readonly originUrl: string;
  readonly deployId: number;
  /**
   * Set on the default address only, once the project's primary custom domain is live: its pages
   * redirect there (308), its API under `/api/` stays served (see docs/decisions.md).
   */
  readonly primaryHost?: string;
}

export interface RedirectRoute {
  readonly kind: 'redirect';
  readonly projectId: number;
  readonly to: string;
  readonly status: number;
}

export type Route = ProjectRoute | RedirectRoute;

/**
 * Hostname → what to serve, for every published project: its default address, its verified
 * custom domains, and its redirect-from domains. Built from the database in one pass; the edge
 * rebuilds it whenever the control plane reports a change, before serving the next request, and
 * when a live primary's certificate expires (no change is published for the passing of time).
 */
export class RoutingTable {
  readonly #db: PlatformDb;
  readonly #platformDomain: string;
  readonly #clock: Clock;
  #routes = new Map<string, Route>();
  /** Bumped by every change; the table answers only while it was read at the latest one. */
  #changes = 1;
  /** The value of `#changes` when the table in `#routes` started being read. */
  #readAt = 0;
  /** The earliest expiry of a live primary's certificate: the table is stale from then on. */
  #staleAt = Number.POSITIVE_INFINITY;
  #loading: Promise<void> | undefined;

  constructor(db: PlatformDb, platformDomain: string, clock: Clock) {
    this.#db = db;
    this.#platformDomain = platformDomain;
    this.#clock = clock;
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
          const built = await this.#build();
          this.#routes = built.routes;
          this.#staleAt = built.staleAt;
          this.#readAt = changes;
        } while (this.#readAt !== this.#changes);
      } finally {
        this.#loading = undefined;
      }
    })();
    await this.#loading;
  }

  async #build(): Promise<{ routes: Map<string, Route>; staleAt: number }> {
    const now = this.#clock.now().getTime();
    const projects = await this.#db
      .selectFrom('projects')
      .select(['id', 'slug', 'origin_url', 'active_deploy_id'])
      .where('active_deploy_id', 'is not', null)
      .execute();
    const routes = new Map<string, Route>();
    const byId = new Map<number, ProjectRoute>();
    const defaultHost = (slug: string) => `${slug}.${this.#platformDomain}`;
    for (const p of projects) {
      const route: ProjectRoute = {
        kind: 'project',
        projectId: p.id,
        slug: p.slug,
        originUrl: p.origin_url,
        deployId: p.active_deploy_id as number,
      };
      byId.set(p.id, route);
      routes.set(defaultHost(p.slug), route);
    }
    const domains = await this.#db
      .selectFrom('domains')
      .select(['hostname', 'project_id'])
      .where('state', 'in', servedStates)
      .execute();
    const served = new Set<string>();
    for (const d of domains) {
      const route = byId.get(d.project_id);
      if (!route) continue;
      routes.set(d.hostname, route);
      served.add(`${d.project_id} ${d.hostname}`);
    }

    // A primary is live when it is verified (not misconfigured: DNS may no longer point here) and
    // has an unexpired certificate, so the redirect lands on a working HTTPS address.
    const primaries = await this.#db
      .selectFrom('projects')
      .innerJoin('domains', (join) =>
        join
          .onRef('domains.project_id', '=', 'projects.id')
          .onRef('domains.hostname', '=', 'projects.primary_domain'),
      )
      .innerJoin('certificates', 'certificates.hostname', 'domains.hostname')
      .select(['projects.id', 'domains.hostname', 'certificates.not_after'])
      .where('domains.state', '=', 'verified')
      .where('projects.active_deploy_id', 'is not', null)
      .execute();
    let staleAt = Number.POSITIVE_INFINITY;
    const livePrimary = new Map<number, string>();
    for (const row of primaries) {
      const expires = Date.parse(row.not_after);
      const route = byId.get(row.id);
      if (!route || expires <= now) continue;
      staleAt = Math.min(staleAt, expires);
      livePrimary.set(row.id, row.hostname);
      routes.set(defaultHost(route.slug), { ...route, primaryHost: row.hostname });
    }

    const redirects = await this.#db
      .selectFrom('redirects')
      .select(['project_id', 'from_host', 'to_host', 'status'])
      .execute();
    for (const r of redirects) {
      // Only a domain the project serves redirects: DNS must point here and be verified.
      if (!served.has(`${r.project_id} ${r.from_host}`)) continue;
      // A redirect to the default address goes straight to the live primary: redirects never chain.
      const slug = byId.get(r.project_id)?.slug;
      const primary = livePrimary.get(r.project_id);
      const to =
        primary !== undefined && slug !== undefined && r.to_host === defaultHost(slug) ? primary : r.to_host;
      routes.set(r.from_host, { kind: 'redirect', projectId: r.project_id, to, status: r.status });
    }
    return { routes, staleAt };
  }
}
