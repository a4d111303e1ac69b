import { normalizeHostname } from '../../lib/hostname.ts';
import { certificateStatuses } from '../certificates/certificate-status.ts';
import type { Actor, PlatformContext } from '../context.ts';
import { type Project, projectFor } from '../projects/projects.ts';
import {
  type DomainEventView,
  type DomainRow,
  type DomainView,
  domainHistory,
  hostnamesServedElsewhere,
  liveDomain,
  toView,
} from './domain-store.ts';

export async function listDomains(ctx: PlatformContext, actor: Actor, slug: string): Promise<DomainView[]> {
  const project = await projectFor(ctx, actor, slug);
  const rows = await ctx.db
    .selectFrom('domains')
    .selectAll()
    .where('project_id', '=', project.id)
    .where('state', '<>', 'removed')
    .orderBy('id')
    .execute();
  return domainViews(ctx, project, rows);
}

/** Domains as the API shows them: each with whether another project serves it, and its certificate. */
export async function domainViews(
  ctx: PlatformContext,
  project: Project,
  rows: readonly DomainRow[],
): Promise<DomainView[]> {
  const certificates = await certificateStatuses(
    ctx.db,
    rows.map((r) => r.id),
  );
  const elsewhere = await hostnamesServedElsewhere(ctx.db, project, rows);
  return rows.map((row) =>
    toView(ctx, project, row, elsewhere.has(row.hostname), certificates.get(row.id) ?? null),
  );
}

/** One domain as the API shows it (domainViews for one row). */
export async function domainView(
  ctx: PlatformContext,
  project: Project,
  row: DomainRow,
): Promise<DomainView> {
  const [view] = await domainViews(ctx, project, [row]);
  return view!;
}

/** The project `slug` as `actor` may see it, and its domain `hostname` (not removed). */
export async function projectDomain(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  hostname: string,
): Promise<{ project: Project; row: DomainRow }> {
  const project = await projectFor(ctx, actor, slug);
  return { project, row: await liveDomain(ctx.db, project, normalizeHostname(hostname)) };
}

/** A domain with its history: who did what, when, with what outcome. */
export async function inspectDomain(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  input: string,
): Promise<{ domain: DomainView; history: DomainEventView[] }> {
  const { project, row } = await projectDomain(ctx, actor, slug, input);
  return { domain: await domainView(ctx, project, row), history: await domainHistory(ctx.db, row.id) };
}
