import { generatePassword } from './accounts/secrets.ts';
import { createTeam, setPlan } from './accounts/teams.ts';
import { createUser } from './accounts/users.ts';
import type { PlatformContext } from './context.ts';
import { deployProject } from './projects/deploys.ts';
import { grantAllowlist } from './projects/origin-grants.ts';
import { createProject } from './projects/projects.ts';

export interface FirstProject {
  readonly slug: string;
  readonly name: string;
  readonly originUrl: string;
  /** The OpenAPI document to deploy, as JSON text. */
  readonly document: string;
}

export interface Bootstrapped {
  email: string;
  /** Present only when the password was generated here: shown once, never stored in clear. */
  generatedPassword?: string;
  project: string;
}

/**
 * First start: an admin, a team on the Enterprise plan holding the operator's origin allowlist
 * (origin-grants.ts), and the first project deployed. Does
 * nothing once any account exists, so restarts and extra nodes never repeat it.
 */
export async function bootstrapPlatform(
  ctx: PlatformContext,
  first: FirstProject,
): Promise<Bootstrapped | undefined> {
  const any = await ctx.db.selectFrom('users').select('id').limit(1).executeTakeFirst();
  if (any) return undefined;
  const generatedPassword = ctx.config.adminPassword === undefined ? generatePassword() : undefined;
  const admin = await createUser(ctx, {
    email: ctx.config.adminEmail,
    password: ctx.config.adminPassword ?? (generatedPassword as string),
    isAdmin: true,
  });
  const team = await createTeam(ctx, admin, 'Kennel');
  await setPlan(ctx, admin, team.id, 'enterprise');
  // KENNEL_ORIGIN_ALLOWLIST (the Petstore's origin among them) is the operator's, for this team only.
  await grantAllowlist(ctx, team.id);
  await createProject(ctx, admin, {
    teamId: team.id,
    slug: first.slug,
    name: first.name,
    originUrl: first.originUrl,
  });
  await deployProject(ctx, admin, first.slug, { document: first.document });
  return {
    email: admin.email,
    ...(generatedPassword ? { generatedPassword } : {}),
    project: first.slug,
  };
}
