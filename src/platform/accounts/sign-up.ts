import type { PlatformContext } from '../context.ts';
import { platformErrors } from '../errors.ts';
import { createTeam } from './teams.ts';
import { createUser } from './users.ts';

/** Open sign-up (KENNEL_OPEN_SIGNUP=on): an account, and a team of its own to start in. */
export async function signUp(
  ctx: PlatformContext,
  input: { email: string; name: string; password: string },
): Promise<{ email: string; name: string; teamId: number }> {
  if (!ctx.config.openSignUp) {
    throw platformErrors.error(
      'sign_up_closed',
      'This Kennel does not take sign-ups: ask a team owner to invite you.',
    );
  }
  // Nobody mailed the address: the account's email is unproved until a mailed invitation proves it.
  const actor = await createUser(ctx, { ...input, emailProved: false });
  const team = await createTeam(ctx, actor, `${input.name}’s team`);
  return { email: actor.email, name: input.name, teamId: team.id };
}
