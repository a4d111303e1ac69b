import type { PlatformDb } from '../platform/context.ts';
import { servedStates } from '../platform/domains/domain-store.ts';

export interface ProjectRoute {
  readonly kind: 'project';
  readonly projectId: number;
  readonly slug: string;
  readonly originUrl: string;
  readonly deployId: number;
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
 * rebuilds it whenever the control plane reports a change, before serving the next request.
 */
export class RoutingTable {
  readonly #db: PlatformDb;
  readonly #platformDomain: string;
  #routes = new Map<string, Route>();
  #stale = true;
  #loading: Promise<void> | undefined;

  constructor(db: PlatformDb, platformDomain: string) {
    this.#db = db;
    this.#platformDomain = platformDomain;
  }

  /** Marks the table stale: the next lookup reloads it first. */
  invalidate(): void {
    this.#stale = true;
  }

  async lookup(host: string): Promise<Route | undefined> {
    if (this.#stale) await this.#reload();
    return this.#routes.get(host);
  }

  async #reload(): Promise<void> {
    // One reload at a time; a change during a reload marks the table stale again.
    this.#loading ??= (async () => {
      this.#stale = false;
      try {
        this.#routes = await this.#build();
      } catch (error) {
        this.#stale = true;
        throw error;
      } finally {
        this.#loading = undefined;
      }
    })();
    await this.#loading;
    if (this.#stale) await this.#reload();
  }

  async #build(): Promise<Map<string, Route>> {
    const projects = await this.#db
      .selectFrom('projects')
      .select(['id', 'slug', 'origin_url', 'active_deploy_id'])
      .where('active_deploy_id', 'is not', null)
      .execute();
    const routes = new Map<string, Route>();
    const byId = new Map<number, ProjectRoute>();
    for (const p of projects) {
      const route: ProjectRoute = {
        kind: 'project',
        projectId: p.id,
        slug: p.slug,
        originUrl: p.origin_url,
        deployId: p.active_deploy_id as number,
      };
      byId.set(p.id, route);
      routes.set(`${p.slug}.${this.#platformDomain}`, route);
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
    const redirects = await this.#db
      .selectFrom('redirects')
      .select(['project_id', 'from_host', 'to_host', 'status'])
      .execute();
    for (const r of redirects) {
      // Only a domain the project serves redirects: DNS must point here and be verified.
      if (!served.has(`${r.project_id} ${r.from_host}`)) continue;
      routes.set(r.from_host, { kind: 'redirect', projectId: r.project_id, to: r.to_host, status: r.status });
    }
    return routes;
  }
}
