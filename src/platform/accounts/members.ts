import { transact } from '../../storage/index.ts';
import type { TeamMember as Member } from '../api-types.ts';
import type { Actor, PlatformContext, PlatformDb } from '../context.ts';
import { platformErrors } from '../errors.ts';
import { type Role, type Team, teamFor, teamLabel } from './teams.ts';

/** A team's members: who they are, role changes and removal, with the last owner kept. */

export type { TeamMember as Member } from '../api-types.ts';

/** The members of team `teamId`, each row a Member. */
function membersOf(db: PlatformDb, teamId: number) {
  return db
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select([
      'users.id as userId',
      'users.email',
      'users.name',
      'memberships.role',
      'memberships.created_at as since',
    ])
    .where('memberships.team_id', '=', teamId);
}

/** Every member of a team the actor can see. */
export async function listMembers(ctx: PlatformContext, actor: Actor, teamId: number): Promise<Member[]> {
  await teamFor(ctx, actor, teamId);
  return membersOf(ctx.db, teamId).orderBy('users.id').execute();
}

export const memberNotFound = (team: Team, userId: number) =>
  platformErrors.error(
    'member_not_found',
    `The ${teamLabel(team)} has no member with user id ${userId}: check the id against the team's members.`,
  );

/**
 * Changes a membership in one transaction that first locks the team's owners (PostgreSQL; SQLite
 * runs one writer at a time), so two owners demoting each other at once cannot leave none.
 */
async function changeMembership(
  ctx: PlatformContext,
  team: Team,
  userId: number,
  change: { role: Role } | 'remove',
): Promise<Member> {
  const teamId = team.id;
  return transact(ctx.db, async (trx) => {
    let owners = trx
      .selectFrom('memberships')
      .select('user_id')
      .where('team_id', '=', teamId)
      .where('role', '=', 'owner');
    if (ctx.dialect === 'postgres') owners = owners.forUpdate();
    const ownerIds = (await owners.execute()).map((r) => Number(r.user_id));
    const row = await membersOf(trx, teamId).where('memberships.user_id', '=', userId).executeTakeFirst();
    if (!row) throw memberNotFound(team, userId);
    const losesOwner = row.role === 'owner' && (change === 'remove' || change.role !== 'owner');
    if (losesOwner && ownerIds.length <= 1) {
      throw platformErrors.error(
        'last_owner',
        `${row.email} is the last owner of the ${teamLabel(team)}: make another member owner first.`,
      );
    }
    if (change === 'remove') {
      await trx
        .deleteFrom('memberships')
        .where('team_id', '=', teamId)
        .where('user_id', '=', userId)
        .execute();
    } else {
      await trx
        .updateTable('memberships')
        .set({ role: change.role })
        .where('team_id', '=', teamId)
        .where('user_id', '=', userId)
        .execute();
    }
    return change === 'remove' ? row : { ...row, role: change.role };
  });
}

/** Owners (and platform admins) change a member's role; the last owner stays an owner. */
export async function setMemberRole(
  ctx: PlatformContext,
  actor: Actor,
  teamId: number,
  userId: number,
  role: Role,
): Promise<Member> {
  const team = await teamFor(ctx, actor, teamId, 'owner');
  return changeMembership(ctx, team, userId, { role });
}

/** Owners remove a member (anyone removes themself: leaving); the last owner cannot go. */
export async function removeMember(
  ctx: PlatformContext,
  actor: Actor,
  teamId: number,
  userId: number,
): Promise<void> {
  const team = await teamFor(ctx, actor, teamId, userId === actor.userId ? 'member' : 'owner');
  await changeMembership(ctx, team, userId, 'remove');
}
