import type { Selectable } from 'kysely';
import { isUniqueViolation } from '../../storage/index.ts';
import { teamFor } from '../accounts/teams.ts';
import type { Actor, PlatformContext } from '../context.ts';
import type { PlatformTables } from '../db-schema.ts';
import { platformErrors } from '../errors.ts';
import type { PlanName } from '../plans.ts';
import { readOriginAccess } from './origin-grants.ts';

export interface Project {
  id: number;
  teamId: number;
  slug: string;
  name: string;
  originUrl: string;
  activeDeployId: number | null;
  primaryDomain: string | null;
  plan: PlanName;
  /** `<slug>.<platform domain>` */
  defaultHost: string;
}

/** Slugs become DNS labels; a few are kept for the platform itself. */
export const SLUG_PATTERN = '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$';
const RESERVED_SLUGS = new Set(['www', 'api', 'admin', 'dashboard', 'app', 'static', 'assets', 'kennel']);

export const projectNotFound = (slug: string) =>
  platformErrors.error(
    'project_not_found',
    `No project "${slug}" is visible to you: check the slug against the list of your projects.`,
  );

export function checkOriginUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw platformErrors.error(
      'validation_failed',
      `originUrl "${url}" is not a URL. Give the http(s) address of the API's origin.`,
    );
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw platformErrors.error(
      'validation_failed',
      `originUrl must be http:// or https:// (got ${parsed.protocol}).`,
    );
  }
  // `http://127.0.0.1:30010@example.com` reaches example.com, but reads as 127.0.0.1 to whoever
  // checks it; and credentials would sit in clear in the project's settings.
  if (parsed.username !== '' || parsed.password !== '') {
    throw platformErrors.error(
      'validation_failed',
      `originUrl "${url}" carries a user name or password (before the @): give the origin's address alone, e.g. https://api.example.com; Kennel does not send credentials to origins.`,
    );
  }
  return parsed.toString().replace(/\/$/, '');
}

/**
 * `checkOriginUrl`, then the address policy (src/lib/address-policy.ts) with the team's origin
 * grants (origin-grants.ts): a project's origin must be a public address unless a platform admin
 * granted its team that origin, since the edge connects to it from inside the operator's network.
 * The management API checks every origin a tenant sets; the bootstrap does not go through it (its
 * Petstore is the operator's own, on the bootstrap team's grant). The edge judges again on every
 * request, names on every connection.
 */
export async function checkTenantOriginUrl(
  ctx: PlatformContext,
  teamId: number,
  url: string,
): Promise<string> {
  const originUrl = checkOriginUrl(url);
  const access = await readOriginAccess(ctx.db, ctx.config.originAllowlist);
  const refusal = access.refusal(teamId, originUrl);
  if (refusal !== undefined) {
    const team = await ctx.db.selectFrom('teams').select('name').where('id', '=', teamId).executeTakeFirst();
    throw platformErrors.error(
      'origin_not_allowed',
      `originUrl ${originUrl} ${refusal}; projects may reach the platform's own network only with a grant. Use a public address, or ask a platform admin to grant team ${JSON.stringify(team?.name ?? teamId)} the origin ${new URL(originUrl).origin}.`,
    );
  }
  return originUrl;
}

export async function createProject(
  ctx: PlatformContext,
  actor: Actor,
  input: { teamId: number; slug: string; name: string; originUrl: string },
): Promise<Project> {
  const team = await teamFor(ctx, actor, input.teamId);
  // `--` is refused in new slugs: `<slug>--<id>` is a preview's address (src/platform/previews/),
  // and `xn--` would read as an internationalised name. Older slugs with `--` keep working.
  if (
    !new RegExp(SLUG_PATTERN).test(input.slug) ||
    RESERVED_SLUGS.has(input.slug) ||
    input.slug.includes('--')
  ) {
    throw platformErrors.error(
      'validation_failed',
      `Slug "${input.slug}" is not allowed: use 1–63 lowercase letters, digits and single inner hyphens (no "--", which preview addresses use)${RESERVED_SLUGS.has(input.slug) ? ', and not a reserved name' : ''}.`,
    );
  }
  const originUrl = checkOriginUrl(input.originUrl);
  try {
    const row = await ctx.db
      .insertInto('projects')
      .values({
        team_id: team.id,
        slug: input.slug,
        name: input.name,
        origin_url: originUrl,
        active_deploy_id: null,
        primary_domain: null,
        created_at: ctx.clock.now().toISOString(),
      })
      .returning(['id'])
      .executeTakeFirstOrThrow();
    ctx.changes.publish({ kind: 'projects', projectId: row.id });
    return {
      id: row.id,
      teamId: team.id,
      slug: input.slug,
      name: input.name,
      originUrl,
      activeDeployId: null,
      primaryDomain: null,
      plan: team.plan,
      defaultHost: `${input.slug}.${ctx.config.platformDomain}`,
    };
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw platformErrors.error('slug_taken', `The slug "${input.slug}" is taken. Pick another one.`);
    }
    throw error;
  }
}

function projectQuery(ctx: PlatformContext, actor: Actor) {
  return ctx.db
    .selectFrom('projects')
    .innerJoin('teams', 'teams.id', 'projects.team_id')
    .select([
      'projects.id',
      'projects.team_id',
      'projects.slug',
      'projects.name',
      'projects.origin_url',
      'projects.active_deploy_id',
      'projects.primary_domain',
      'teams.plan',
    ])
    .$if(!actor.isAdmin, (q) =>
      q.where((eb) =>
        eb.exists(
          eb
            .selectFrom('memberships')
            .select('memberships.user_id')
            .whereRef('memberships.team_id', '=', 'projects.team_id')
            .where('memberships.user_id', '=', actor.userId),
        ),
      ),
    );
}

function toProject(
  ctx: PlatformContext,
  row: Omit<Selectable<PlatformTables['projects']>, 'created_at'> & { plan: PlanName },
): Project {
  return {
    id: row.id,
    teamId: row.team_id,
    slug: row.slug,
    name: row.name,
    originUrl: row.origin_url,
    activeDeployId: row.active_deploy_id,
    primaryDomain: row.primary_domain,
    plan: row.plan,
    defaultHost: `${row.slug}.${ctx.config.platformDomain}`,
  };
}

export async function listProjects(ctx: PlatformContext, actor: Actor): Promise<Project[]> {
  const rows = await projectQuery(ctx, actor).orderBy('projects.id').execute();
  return rows.map((r) => toProject(ctx, r));
}

/** The project if the actor's team owns it; otherwise "not found", revealing nothing. */
export async function projectFor(ctx: PlatformContext, actor: Actor, slug: string): Promise<Project> {
  const row = await projectQuery(ctx, actor).where('projects.slug', '=', slug).executeTakeFirst();
  if (!row) throw projectNotFound(slug);
  return toProject(ctx, row);
}
