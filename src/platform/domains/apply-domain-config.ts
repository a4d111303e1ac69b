import { parseHostname } from '../../lib/hostname.ts';
import { transact } from '../../storage/index.ts';
import type { Actor, PlatformContext } from '../context.ts';
import { platformErrors } from '../errors.ts';
import { PLANS } from '../plans.ts';
import { readStoredCors, writeCors } from '../projects/project-cors.ts';
import { type Project, projectFor } from '../projects/projects.ts';
import { insertDomain, requireDomainPrerequisites } from './add-domain.ts';
import {
  type DomainConfig,
  formatProblems,
  parseDomainConfig,
  type Redirect,
  renderDomainConfig,
} from './domain-config.ts';
import { liveDomain } from './domain-store.ts';
import { markRemoved } from './remove-domain.ts';

export interface ApplyResult {
  added: string[];
  removed: string[];
  primary: string | null;
  redirects: Redirect[];
}

async function liveHostnames(ctx: PlatformContext, project: Project): Promise<string[]> {
  const rows = await ctx.db
    .selectFrom('domains')
    .select('hostname')
    .where('project_id', '=', project.id)
    .where('state', '<>', 'removed')
    .orderBy('hostname')
    .execute();
  return rows.map((r) => r.hostname);
}

async function currentConfig(ctx: PlatformContext, project: Project): Promise<DomainConfig> {
  const redirects = await ctx.db
    .selectFrom('redirects')
    .select(['from_host', 'to_host', 'status'])
    .where('project_id', '=', project.id)
    .orderBy('from_host')
    .execute();
  const cors = await readStoredCors(ctx.db, project.id);
  return {
    ...(cors && { cors }),
    names: await liveHostnames(ctx, project),
    primary: project.primaryDomain,
    redirects: redirects.map((r) => ({
      from: r.from_host,
      to: r.to_host,
      status: r.status as Redirect['status'],
    })),
  };
}

/** `export`: the project's domains as YAML that `apply` accepts unchanged. */
export async function exportDomainConfig(ctx: PlatformContext, actor: Actor, slug: string): Promise<string> {
  return (await readDomainConfig(ctx, actor, slug)).yaml;
}

/** The configuration as YAML and as values: the dashboard's form reads the values. */
export async function readDomainConfig(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
): Promise<{ yaml: string; primary: string | null; redirects: Redirect[] }> {
  const project = await projectFor(ctx, actor, slug);
  const config = await currentConfig(ctx, project);
  return { yaml: renderDomainConfig(config), primary: config.primary, redirects: config.redirects };
}

/**
 * `apply`: reconciles the project with a YAML file in one transaction — adds the names it lacks,
 * sets the primary and replaces the redirects. Removes domains the file does not name only with
 * `prune`. An invalid file changes nothing and is refused with every problem's line and column.
 */
export async function applyDomainConfig(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  text: string,
  options: { prune?: boolean } = {},
): Promise<ApplyResult> {
  const project = await projectFor(ctx, actor, slug);
  const existing = await liveHostnames(ctx, project);
  const parsed = parseDomainConfig(text, {
    existing: options.prune ? [] : existing,
    defaultHost: project.defaultHost,
    platformDomain: ctx.config.platformDomain,
  });
  if (!parsed.ok) {
    throw platformErrors.error(
      'invalid_domain_config',
      `The domain configuration is not valid; nothing was changed.\n${formatProblems(parsed.problems)}`,
    );
  }
  const { config } = parsed;
  const added = config.names.filter((n) => !existing.includes(n));
  const removed = options.prune ? existing.filter((n) => !config.names.includes(n)) : [];
  if (added.length > 0) requireDomainPrerequisites(project, actor);
  // Counted before any insert: the error states the project's real count and what the file adds,
  // not the count reached part-way through the transaction.
  const plan = PLANS[project.plan];
  const after = existing.length - removed.length + added.length;
  if (added.length > 0 && after > plan.maxDomainsPerProject) {
    throw platformErrors.error(
      'domain_limit_reached',
      `Project ${project.slug} has ${existing.length} domains; this file would bring it to ${after}, more than the ${plan.title} plan allows (${plan.maxDomainsPerProject}). Nothing was changed. Name fewer domains, apply with prune to drop those the file omits, or ask an admin for a larger plan.`,
    );
  }
  const now = ctx.clock.now();
  await transact(ctx.db, async (trx) => {
    for (const name of removed) {
      await markRemoved(trx, now, actor, await liveDomain(trx, project, name), { via: 'apply --prune' });
    }
    for (const name of added) {
      const hostname = parseHostname(name);
      if (!hostname.ok) throw new Error(`validated name ${name} no longer parses`);
      await insertDomain(trx, ctx, actor, project, hostname);
    }
    await trx
      .updateTable('projects')
      .set({ primary_domain: config.primary })
      .where('id', '=', project.id)
      .execute();
    await trx.deleteFrom('redirects').where('project_id', '=', project.id).execute();
    if (config.redirects.length > 0) {
      await trx
        .insertInto('redirects')
        .values(
          config.redirects.map((r) => ({
            project_id: project.id,
            from_host: r.from,
            to_host: r.to,
            status: r.status,
          })),
        )
        .execute();
    }
    if (config.cors) await writeCors(trx, project.id, config.cors, now);
  });
  // Any change reloads the edge's routes, the CORS policy they carry included.
  ctx.changes.publish({ kind: 'redirects', projectId: project.id });
  return { added, removed, primary: config.primary, redirects: config.redirects };
}
