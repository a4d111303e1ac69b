import { isForeignKeyViolation, isUniqueViolation, transact } from '../../storage/index.ts';
import type { Actor, PlatformContext } from '../context.ts';
import type { Role } from '../db-schema.ts';
import { platformErrors } from '../errors.ts';
import { isPlanName, PLAN_NAMES, type PlanName } from '../plans.ts';
import { normaliseEmail } from './users.ts';

export type { Role } from '../db-schema.ts';

export interface Team {
  id: number;
  name: string;
  plan: PlanName;
  role: Role | null;
}

/** How messages name a team: by its name, which people know it by, not its id. */
export const teamLabel = (team: Pick<Team, 'name'>) => `team ${JSON.stringify(team.name)}`;

/** A team's name as kept: trimmed, and something left (the schema bounds its length). */
function teamName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) {
    throw platformErrors.error('validation_failed', 'A team name cannot be blank: give it a few letters.');
  }
  return trimmed;
}

const notFound = (id: number) =>
  platformErrors.error(
    'team_not_found',
    `No team with id ${id} is visible to you: check the id against the list of your teams.`,
  );

export async function createTeam(
  ctx: PlatformContext,
  actor: Actor,
  name: string,
  plan: PlanName = 'free',
): Promise<Team> {
  const kept = teamName(name);
  return transact(ctx.db, async (trx) => {
    const now = ctx.clock.now().toISOString();
    const row = await trx
      .insertInto('teams')
      .values({ name: kept, plan, created_at: now })
      .returning(['id'])
      .executeTakeFirstOrThrow();
    await trx
      .insertInto('memberships')
      .values({ team_id: row.id, user_id: actor.userId, role: 'owner', created_at: now })
      .execute();
    return { id: row.id, name: kept, plan, role: 'owner' };
  });
}

/** The teams the actor belongs to; platform admins see every team. */
export async function listTeams(ctx: PlatformContext, actor: Actor): Promise<Team[]> {
  const rows = await ctx.db
    .selectFrom('teams')
    .leftJoin('memberships', (join) =>
      join.onRef('memberships.team_id', '=', 'teams.id').on('memberships.user_id', '=', actor.userId),
    )
    .select(['teams.id', 'teams.name', 'teams.plan', 'memberships.role'])
    .$if(!actor.isAdmin, (q) => q.where('memberships.role', 'is not', null))
    .orderBy('teams.id')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    plan: r.plan,
    role: r.role ?? null,
  }));
}

/**
 * The team if the actor may act on it with at least `role`. A team the actor cannot see is "not
 * found", so its existence is not revealed; a visible team with too little role is forbidden.
 */
export async function teamFor(
  ctx: PlatformContext,
  actor: Actor,
  teamId: number,
  role: Role = 'member',
): Promise<Team> {
  const team = (await listTeams(ctx, actor)).find((t) => t.id === teamId);
  if (!team) throw notFound(teamId);
  if (role === 'owner' && team.role !== 'owner' && !actor.isAdmin) {
    throw platformErrors.error('forbidden', `Only owners of ${teamLabel(team)} can do this. Ask an owner.`);
  }
  return team;
}

/** Renames a team: its owners (and platform admins). */
export async function renameTeam(
  ctx: PlatformContext,
  actor: Actor,
  teamId: number,
  name: string,
): Promise<Team> {
  const team = await teamFor(ctx, actor, teamId, 'owner');
  const kept = teamName(name);
  await ctx.db.updateTable('teams').set({ name: kept }).where('id', '=', teamId).execute();
  return { ...team, name: kept };
}

const hasProjects = (team: Team, slugs: string[]) =>
  platformErrors.error(
    'team_has_projects',
    `The ${teamLabel(team)} still has ${slugs.length === 1 ? 'a project' : `${slugs.length} projects`} (${slugs.join(', ')}): delete ${slugs.length === 1 ? 'it' : 'them'} or move ${slugs.length === 1 ? 'it' : 'them'} to another team first, then delete the team.`,
  );

/**
 * Deletes a team with no projects: its owners (and platform admins). Its memberships,
 * invitations, webhook endpoint and origin grants go with it (ON DELETE CASCADE); a project keeps
 * its team (ON DELETE RESTRICT), so a project made while the team is being deleted refuses the
 * delete the same way as one made before.
 */
export async function deleteTeam(ctx: PlatformContext, actor: Actor, teamId: number): Promise<void> {
  const team = await teamFor(ctx, actor, teamId, 'owner');
  const projects = async () =>
    (
      await ctx.db
        .selectFrom('projects')
        .select('slug')
        .where('team_id', '=', teamId)
        .orderBy('slug')
        .execute()
    ).map((p) => p.slug);
  const slugs = await projects();
  if (slugs.length > 0) throw hasProjects(team, slugs);
  try {
    await ctx.db.deleteFrom('teams').where('id', '=', teamId).execute();
  } catch (error) {
    if (isForeignKeyViolation(error)) throw hasProjects(team, await projects());
    throw error;
  }
}

/** Sets a team's plan: platform admins only (there is no billing). */
export async function setPlan(
  ctx: PlatformContext,
  actor: Actor,
  teamId: number,
  plan: string,
): Promise<Team> {
  if (!actor.isAdmin) {
    throw platformErrors.error('forbidden', 'Only a platform admin can change a team’s plan.');
  }
  if (!isPlanName(plan)) {
    throw platformErrors.error(
      'validation_failed',
      `Unknown plan "${plan}". Use one of: ${PLAN_NAMES.join(', ')}.`,
    );
  }
  const team = await teamFor(ctx, actor, teamId);
  await ctx.db.updateTable('teams').set({ plan }).where('id', '=', teamId).execute();
  return { ...team, plan };
}

/**
 * Adds an existing account to a team directly: the operator's (and tests') seeding only. The API
 * adds people through invitations they accept (inviteMember in invitations.ts), so no owner can hand a
 * team to whoever holds an email's account, nor learn which emails have one.
 */
export async function addMember(
  ctx: PlatformContext,
  actor: Actor,
  teamId: number,
  email: string,
  role: Role,
): Promise<{ email: string; role: Role }> {
  const team = await teamFor(ctx, actor, teamId, 'owner');
  const user = await ctx.db
    .selectFrom('users')
    .select(['id', 'email'])
    .where('email', '=', normaliseEmail(email))
    .executeTakeFirst();
  if (!user) {
    throw platformErrors.error(
      'user_not_found',
      `No account uses ${normaliseEmail(email)}. They must sign up first.`,
    );
  }
  try {
    await ctx.db
      .insertInto('memberships')
      .values({ team_id: teamId, user_id: user.id, role, created_at: ctx.clock.now().toISOString() })
      .execute();
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw platformErrors.error(
        'already_member',
        `${user.email} is already a member of ${teamLabel(team)}.`,
      );
    }
    throw error;
  }
  return { email: user.email, role };
}
