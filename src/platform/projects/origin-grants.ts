import { checkOriginUrl, normaliseOrigin, type OriginPolicy } from '../../lib/address-policy.ts';
import { isUniqueViolation } from '../../storage/index.ts';
import type { OriginGrant } from '../api-types.ts';
import type { Actor, PlatformContext, PlatformDb } from '../context.ts';
import { platformErrors } from '../errors.ts';

/**
 * Origin grants: which teams' projects may reach which private origins. The address policy
 * (src/lib/address-policy.ts) keeps every project on public addresses; a platform admin lets one
 * team past it for one origin (`scheme://host:port`), or for the operator's whole
 * KENNEL_ORIGIN_ALLOWLIST (the grant named `KENNEL_ORIGIN_ALLOWLIST`, which the first start gives
 * the bootstrap team). A granted origin is reserved: only teams holding a grant for it may use its
 * host, so one team's grant of `http://billing.internal:8080` does not let another team's project
 * name that host (a name is not judged at connect time once any grant exempts it).
 *
 * The management API judges an origin when a tenant sets it (`OriginAccess.refusal`), the edge
 * again on every forwarded request (the routing table reads the grants with the routes, so a
 * revoked grant stops forwarding from the next request, on every node).
 */

/** The grant of every origin listed in KENNEL_ORIGIN_ALLOWLIST, whatever it lists at the time. */
export const ALLOWLIST_GRANT = 'KENNEL_ORIGIN_ALLOWLIST';

export type { OriginGrant } from '../api-types.ts';

/** The grants in force, read in one pass: per team, and all together for the edge's guard. */
export class OriginAccess {
  readonly #byTeam = new Map<number, OriginPolicy>();
  /** Hosts (as `URL.hostname` writes them) of every granted origin: reserved to their grantees. */
  readonly #reservedHosts = new Set<string>();
  /** Every origin some team may reach: what the edge's connections may reach at all. */
  readonly platform: OriginPolicy;

  constructor(grants: Iterable<{ teamId: number; origin: string }>, allowlist: readonly string[]) {
    const teams = new Map<number, Set<string>>();
    const every = new Set<string>();
    for (const { teamId, origin } of grants) {
      const origins = origin === ALLOWLIST_GRANT ? allowlist : [origin];
      const own = teams.get(teamId) ?? new Set<string>();
      for (const one of origins) {
        own.add(one);
        every.add(one);
      }
      teams.set(teamId, own);
    }
    for (const [teamId, origins] of teams) this.#byTeam.set(teamId, { allowlist: [...origins] });
    for (const origin of [...every, ...allowlist]) this.#reservedHosts.add(new URL(origin).hostname);
    this.platform = { allowlist: [...new Set([...every, ...allowlist])] };
  }

  /** The origins a team's projects may reach although they are not public. */
  policyFor(teamId: number): OriginPolicy {
    return this.#byTeam.get(teamId) ?? { allowlist: [] };
  }

  /**
   * Why a project of `teamId` may not use `url` (completing a sentence that starts with the URL),
   * or undefined when it may, as far as can be told without DNS.
   */
  refusal(teamId: number, url: string): string | undefined {
    const own = this.policyFor(teamId);
    const reason = checkOriginUrl(url, own);
    if (reason !== undefined) return reason;
    const { hostname, origin } = new URL(url);
    if (this.#reservedHosts.has(hostname) && !own.allowlist.includes(origin)) {
      return `uses ${hostname}, a private origin only teams granted it may use`;
    }
    return undefined;
  }
}

/** The grants in force, with the operator's allowlist for the `KENNEL_ORIGIN_ALLOWLIST` grant. */
export async function readOriginAccess(db: PlatformDb, allowlist: readonly string[]): Promise<OriginAccess> {
  const rows = await db.selectFrom('origin_grants').select(['team_id', 'origin']).execute();
  return new OriginAccess(
    rows.map((r) => ({ teamId: r.team_id, origin: r.origin })),
    allowlist,
  );
}

/** An origin as grants store it; throws validation_failed saying what is expected. */
function grantedOrigin(raw: string): string {
  if (raw === ALLOWLIST_GRANT) return raw;
  try {
    return normaliseOrigin(raw);
  } catch (error) {
    throw platformErrors.error(
      'validation_failed',
      `${(error as Error).message}, or ${ALLOWLIST_GRANT} for every origin of that setting.`,
    );
  }
}

function mustBeAdmin(actor: Actor): void {
  if (!actor.isAdmin) throw platformErrors.error('forbidden', 'Only a platform admin can do this.');
}

function grantQuery(db: PlatformDb) {
  return db
    .selectFrom('origin_grants')
    .innerJoin('teams', 'teams.id', 'origin_grants.team_id')
    .leftJoin('users', 'users.id', 'origin_grants.granted_by')
    .select([
      'origin_grants.id',
      'origin_grants.team_id',
      'teams.name',
      'origin_grants.origin',
      'users.email',
      'origin_grants.created_at',
    ]);
}

type GrantRow = Awaited<ReturnType<ReturnType<typeof grantQuery>['executeTakeFirstOrThrow']>>;

const toGrant = (r: GrantRow): OriginGrant => ({
  id: r.id,
  teamId: r.team_id,
  teamName: r.name,
  origin: r.origin,
  grantedBy: r.email ?? null,
  createdAt: r.created_at,
});

export async function listOriginGrants(ctx: PlatformContext, actor: Actor): Promise<OriginGrant[]> {
  mustBeAdmin(actor);
  const rows = await grantQuery(ctx.db).orderBy('origin_grants.id').execute();
  return rows.map(toGrant);
}

/**
 * Lets `teamId`'s projects reach `origin`. Granting what is granted already answers the existing
 * grant (`created` false). Every edge node hears of it through the change feed.
 */
export async function grantOrigin(
  ctx: PlatformContext,
  actor: Actor,
  input: { teamId: number; origin: string },
): Promise<{ grant: OriginGrant; created: boolean }> {
  mustBeAdmin(actor);
  const origin = grantedOrigin(input.origin);
  const team = await ctx.db
    .selectFrom('teams')
    .select('id')
    .where('id', '=', input.teamId)
    .executeTakeFirst();
  if (!team) {
    throw platformErrors.error(
      'team_not_found',
      `No team with id ${input.teamId}: check the id against the list of teams (GET /api/v1/teams).`,
    );
  }
  let created = true;
  try {
    await insertGrant(ctx, team.id, origin, actor.userId);
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    created = false;
  }
  const row = await grantQuery(ctx.db)
    .where('origin_grants.team_id', '=', team.id)
    .where('origin_grants.origin', '=', origin)
    .executeTakeFirstOrThrow();
  if (created) ctx.changes.publish({ kind: 'origin_grants', projectId: 0 });
  return { grant: toGrant(row), created };
}

/** The bootstrap team's grant of the operator's allowlist (the first start, no admin behind it). */
export async function grantAllowlist(ctx: PlatformContext, teamId: number): Promise<void> {
  await insertGrant(ctx, teamId, ALLOWLIST_GRANT, null);
  ctx.changes.publish({ kind: 'origin_grants', projectId: 0 });
}

async function insertGrant(ctx: PlatformContext, teamId: number, origin: string, by: number | null) {
  await ctx.db
    .insertInto('origin_grants')
    .values({ team_id: teamId, origin, granted_by: by, created_at: ctx.clock.now().toISOString() })
    .execute();
}

/** Takes a grant back: the team's projects on that origin stop being forwarded at once. */
export async function revokeOriginGrant(ctx: PlatformContext, actor: Actor, grantId: number): Promise<void> {
  mustBeAdmin(actor);
  const gone = await ctx.db
    .deleteFrom('origin_grants')
    .where('id', '=', grantId)
    .returning('id')
    .executeTakeFirst();
  if (!gone) {
    throw platformErrors.error(
      'origin_grant_not_found',
      `No origin grant ${grantId}: list the grants (GET /api/v1/origin-grants) for their ids.`,
    );
  }
  ctx.changes.publish({ kind: 'origin_grants', projectId: 0 });
}
