import type { OriginPolicy } from '../../lib/address-policy.ts';
import type { CorsPolicy } from '../../lib/cors-policy.ts';
import type { PlatformDb } from '../context.ts';
import { servedStates } from '../domains/domain-store.ts';
import { previewHost } from '../previews/preview-address.ts';
import { readOriginAccess } from '../projects/origin-grants.ts';
import { readEnabledCorsPolicies } from '../projects/project-cors.ts';

export interface ProjectRoute {
  readonly kind: 'project';
  readonly projectId: number;
  readonly slug: string;
  readonly originUrl: string;
  readonly deployId: number;
  /**
   * Set on the default address only, once the project's primary custom domain is live: its pages
   * redirect there (308), its API under `/api/` stays served (see docs/decisions/edge-and-certificates.md).
   */
  readonly primaryHost?: string;
  /**
   * Set when the project's team may not reach its origin (a private address without the team's
   * origin grant, src/platform/projects/origin-grants.ts): its API is not forwarded.
   */
  readonly originRefused?: true;
  /**
   * Set on a preview deploy's address (src/platform/previews/): private to the project's team
   * and share-link holders, its API forwarded to the origin recorded on that deploy.
   */
  readonly preview?: true;
  /** The project's CORS policy when it is on (src/edge/cors.ts applies it to /api/). */
  readonly cors?: CorsPolicy;
}

export interface RedirectRoute {
  readonly kind: 'redirect';
  readonly projectId: number;
  readonly to: string;
  readonly status: number;
}

export type Route = ProjectRoute | RedirectRoute;

/** What the edge serves, by hostname, and when that answer expires without any change. */
export interface PublishedRoutes {
  readonly routes: Map<string, Route>;
  /** The earliest expiry of a live primary's certificate (ms), or +Infinity. */
  readonly staleAt: number;
  /** Every origin some team was granted: what the edge's connections may reach although private. */
  readonly grantedOrigins: OriginPolicy;
}

/**
 * Hostname → what to serve, for every published project: its default address, its verified
 * custom domains, its redirect-from domains and its preview deploys' addresses, read in one pass. The rules of who serves a
 * name live here, with the domains and certificates they read; the edge only caches the answer
 * (src/edge/routing-table.ts).
 */
export async function readPublishedRoutes(
  db: PlatformDb,
  platformDomain: string,
  at: Date,
  originAllowlist: readonly string[] = [],
): Promise<PublishedRoutes> {
  const now = at.getTime();
  const access = await readOriginAccess(db, originAllowlist);
  const cors = await readEnabledCorsPolicies(db);
  const projects = await db
    .selectFrom('projects')
    .select(['id', 'team_id', 'slug', 'origin_url', 'active_deploy_id'])
    .where('active_deploy_id', 'is not', null)
    .execute();
  const routes = new Map<string, Route>();
  const byId = new Map<number, ProjectRoute>();
  const defaultHost = (slug: string) => `${slug}.${platformDomain}`;
  for (const p of projects) {
    const route: ProjectRoute = {
      kind: 'project',
      projectId: p.id,
      slug: p.slug,
      originUrl: p.origin_url,
      deployId: p.active_deploy_id as number,
      ...(access.refusal(p.team_id, p.origin_url) !== undefined && { originRefused: true as const }),
      ...(cors.has(p.id) && { cors: cors.get(p.id) as CorsPolicy }),
    };
    byId.set(p.id, route);
    routes.set(defaultHost(p.slug), route);
  }
  const domains = await db
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
  const primaries = await db
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

  // Previews after default addresses and domains: an older project whose slug has a preview's
  // shape keeps its default address.
  const previews = await db
    .selectFrom('deploys')
    .innerJoin('projects', 'projects.id', 'deploys.project_id')
    .select([
      'deploys.id',
      'deploys.origin_url',
      'projects.id as project_id',
      'projects.team_id',
      'projects.slug',
    ])
    .where('deploys.preview', '=', 1)
    .where('deploys.status', '=', 'succeeded')
    .execute();
  for (const d of previews) {
    const host = previewHost(d.slug, d.id, platformDomain);
    if (routes.has(host)) continue;
    routes.set(host, {
      kind: 'project',
      projectId: d.project_id,
      slug: d.slug,
      originUrl: d.origin_url,
      deployId: d.id,
      preview: true,
      ...(access.refusal(d.team_id, d.origin_url) !== undefined && { originRefused: true as const }),
      ...(cors.has(d.project_id) && { cors: cors.get(d.project_id) as CorsPolicy }),
    });
  }

  const redirects = await db
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
  return { routes, staleAt, grantedOrigins: access.platform };
}
