import { normalizeHostname } from '../../lib/hostname.ts';
import { certificateStatuses } from '../certificates/certificate-status.ts';
import type { Actor, PlatformContext } from '../context.ts';
import { projectFor } from '../projects/projects.ts';
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
  const certificates = await certificateStatuses(
    ctx.db,
    rows.map((r) => r.id),
  );
  const elsewhere = await hostnamesServedElsewhere(ctx.db, project, rows);
  return rows.map((row) =>
    toView(ctx, project, row as DomainRow, elsewhere.has(row.hostname), certificates.get(row.id) ?? null),
  );
}

/** A domain with its history: who did what, when, with what outcome. */
export async function inspectDomain(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  input: string,
): Promise<{ domain: DomainView; history: DomainEventView[] }> {
  const project = await projectFor(ctx, actor, slug);
  const row = await liveDomain(ctx.db, project, normalizeHostname(input));
  const certificates = await certificateStatuses(ctx.db, [row.id]);
  const elsewhere = await hostnamesServedElsewhere(ctx.db, project, [row]);
  return {
    domain: toView(ctx, project, row, elsewhere.has(row.hostname), certificates.get(row.id) ?? null),
    history: await domainHistory(ctx.db, row.id),
  };
}
