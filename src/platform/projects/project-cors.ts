import { type CorsPolicy, DEFAULT_CORS_POLICY, validateCorsPolicy } from '../../lib/cors-policy.ts';
import type { Actor, PlatformContext, PlatformDb } from '../context.ts';
import type { PlatformTables } from '../db-schema.ts';
import { platformErrors } from '../errors.ts';
import { projectFor } from './projects.ts';

/**
 * A project's CORS policy (src/lib/cors-policy.ts): read and set by its team's members (as its
 * domains are), served by the edge with the project's route (src/platform/publishing/routes.ts).
 */

type CorsRow = Omit<PlatformTables['project_cors'], 'updated_at'>;

function toPolicy(row: CorsRow): CorsPolicy {
  return {
    enabled: Boolean(row.enabled),
    allowedOrigins: JSON.parse(row.allowed_origins) as string[],
    allowedMethods: JSON.parse(row.allowed_methods) as string[],
    allowedHeaders: JSON.parse(row.allowed_headers) as string[],
    exposeHeaders: JSON.parse(row.expose_headers) as string[],
    allowCredentials: Boolean(row.allow_credentials),
    maxAgeSeconds: Number(row.max_age_seconds),
  };
}

const COLUMNS = [
  'project_id',
  'enabled',
  'allowed_origins',
  'allowed_methods',
  'allowed_headers',
  'expose_headers',
  'allow_credentials',
  'max_age_seconds',
] as const;

/** Every project's policy that is on, by project id: what the edge applies. */
export async function readEnabledCorsPolicies(db: PlatformDb): Promise<Map<number, CorsPolicy>> {
  const rows = await db.selectFrom('project_cors').select(COLUMNS).where('enabled', '=', 1).execute();
  return new Map(rows.map((row) => [Number(row.project_id), toPolicy(row)]));
}

/** The project's stored policy, or undefined when none was ever set (then it is off). */
export async function readStoredCors(db: PlatformDb, projectId: number): Promise<CorsPolicy | undefined> {
  const row = await db
    .selectFrom('project_cors')
    .select(COLUMNS)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  return row ? toPolicy(row) : undefined;
}

/** Stores a validated policy in place of the project's (inside the caller's transaction, if any). */
export async function writeCors(
  db: PlatformDb,
  projectId: number,
  policy: CorsPolicy,
  now: Date,
): Promise<void> {
  const values = {
    enabled: policy.enabled ? 1 : 0,
    allowed_origins: JSON.stringify(policy.allowedOrigins),
    allowed_methods: JSON.stringify(policy.allowedMethods),
    allowed_headers: JSON.stringify(policy.allowedHeaders),
    expose_headers: JSON.stringify(policy.exposeHeaders),
    allow_credentials: policy.allowCredentials ? 1 : 0,
    max_age_seconds: policy.maxAgeSeconds,
    updated_at: now.toISOString(),
  };
  await db
    .insertInto('project_cors')
    .values({ project_id: projectId, ...values })
    .onConflict((oc) => oc.column('project_id').doUpdateSet(values))
    .execute();
}

/** The project's policy; the default (off) until someone sets one. */
export async function readProjectCors(ctx: PlatformContext, actor: Actor, slug: string): Promise<CorsPolicy> {
  const project = await projectFor(ctx, actor, slug);
  return (await readStoredCors(ctx.db, project.id)) ?? DEFAULT_CORS_POLICY;
}

/**
 * Replaces the project's policy. An invalid one changes nothing and is refused with every
 * problem, each under its field (`problems`), so a form shows it where it belongs.
 */
export async function setProjectCors(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  input: CorsPolicy,
): Promise<CorsPolicy> {
  const project = await projectFor(ctx, actor, slug);
  const checked = validateCorsPolicy(input);
  if (!checked.ok) {
    throw platformErrors.error(
      'invalid_cors_policy',
      `The CORS policy is not valid; nothing was changed. ${checked.problems.map((p) => `${p.field}: ${p.message}`).join(' ')}`,
      { details: { problems: checked.problems } },
    );
  }
  const { policy } = checked;
  await writeCors(ctx.db, project.id, policy, ctx.clock.now());
  // The edge's routes carry the policy: the next request already sees the new one.
  ctx.changes.publish({ kind: 'projects', projectId: project.id });
  return policy;
}
