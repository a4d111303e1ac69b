import { open, type SealingKey, seal } from '../../lib/sealed-box.ts';
import { checkWebhookUrl, generateSigningSecret, type TargetPolicy } from '../../lib/webhooks/index.ts';
import { transact } from '../../storage/index.ts';
import { teamFor } from '../accounts/teams.ts';
import type { WebhookEndpoint as WebhookEndpointView } from '../api-types.ts';
import type { Actor, PlatformContext, PlatformDb, PlatformWebhooks } from '../context.ts';
import { platformErrors } from '../errors.ts';
import { teamOfEndpointKey } from './webhook-events.ts';

/** A team's endpoint as the API shows it: never the secret, only its last four characters. */
export type { WebhookEndpoint as WebhookEndpointView } from '../api-types.ts';

export function targetPolicy(ctx: PlatformContext): TargetPolicy {
  return { allowPrivate: ctx.config.webhookTargets === 'private' };
}

function webhooksOf(ctx: PlatformContext): PlatformWebhooks {
  if (!ctx.webhooks) throw new Error('webhooks are not wired into this platform context (keys missing)');
  return ctx.webhooks;
}

function checkUrl(ctx: PlatformContext, url: string): string {
  const check = checkWebhookUrl(url, targetPolicy(ctx));
  if (!check.ok) {
    throw platformErrors.error(
      'invalid_webhook_url',
      `The webhook URL ${check.problem}.${ctx.config.webhookTargets === 'public' ? ' This platform delivers only to public https:// URLs (WEBHOOK_TARGETS=public).' : ''}`,
    );
  }
  return check.url;
}

const hint = (secret: string) => `…${secret.slice(-4)}`;

async function endpointRow(db: PlatformDb, teamId: number) {
  return db.selectFrom('webhook_endpoints').selectAll().where('team_id', '=', teamId).executeTakeFirst();
}

function notSet(teamId: number) {
  return platformErrors.error(
    'webhook_not_found',
    `Team ${teamId} has no webhook endpoint: set its URL first.`,
  );
}

function view(
  ctx: PlatformContext,
  row: { team_id: number; url: string; secret_sealed: string; created_at: string; updated_at: string },
): WebhookEndpointView {
  return {
    teamId: row.team_id,
    url: row.url,
    secretHint: hint(open(row.secret_sealed, webhooksOf(ctx).keys)),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Team owners only: members see 403, other teams 404 (existence not revealed). */
async function ownedTeam(ctx: PlatformContext, actor: Actor, teamId: number) {
  return teamFor(ctx, actor, teamId, 'owner');
}

export async function getWebhookEndpoint(
  ctx: PlatformContext,
  actor: Actor,
  teamId: number,
): Promise<WebhookEndpointView> {
  await ownedTeam(ctx, actor, teamId);
  const row = await endpointRow(ctx.db, teamId);
  if (!row) throw notSet(teamId);
  return view(ctx, row);
}

/** The team's endpoints as a list: none or one (a team has at most one), never a 404 for none. */
export async function listWebhookEndpoints(
  ctx: PlatformContext,
  actor: Actor,
  teamId: number,
): Promise<WebhookEndpointView[]> {
  await ownedTeam(ctx, actor, teamId);
  const row = await endpointRow(ctx.db, teamId);
  return row ? [view(ctx, row)] : [];
}

/**
 * Sets the team's endpoint URL. The first time, a signing secret is generated and returned —
 * the only time it is shown; later calls change the URL and keep the secret.
 */
export async function setWebhookEndpoint(
  ctx: PlatformContext,
  actor: Actor,
  teamId: number,
  url: string,
): Promise<{ endpoint: WebhookEndpointView; secret: string | null; created: boolean }> {
  await ownedTeam(ctx, actor, teamId);
  const checked = checkUrl(ctx, url);
  const keys = webhooksOf(ctx).keys;
  const now = ctx.clock.now().toISOString();
  return transact(ctx.db, async (trx) => {
    const updated = await trx
      .updateTable('webhook_endpoints')
      .set({ url: checked, updated_at: now })
      .where('team_id', '=', teamId)
      .returningAll()
      .executeTakeFirst();
    if (updated) return { endpoint: view(ctx, updated), secret: null, created: false };
    const secret = generateSigningSecret();
    const row = await trx
      .insertInto('webhook_endpoints')
      .values({
        team_id: teamId,
        url: checked,
        secret_sealed: seal(secret, keys[0] as SealingKey),
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { endpoint: view(ctx, row), secret, created: true };
  });
}

/** A new signing secret, shown once; the old one stops signing at once. */
export async function rotateWebhookSecret(
  ctx: PlatformContext,
  actor: Actor,
  teamId: number,
): Promise<{ endpoint: WebhookEndpointView; secret: string }> {
  await ownedTeam(ctx, actor, teamId);
  const keys = webhooksOf(ctx).keys;
  const secret = generateSigningSecret();
  const row = await ctx.db
    .updateTable('webhook_endpoints')
    .set({ secret_sealed: seal(secret, keys[0] as SealingKey), updated_at: ctx.clock.now().toISOString() })
    .where('team_id', '=', teamId)
    .returningAll()
    .executeTakeFirst();
  if (!row) throw notSet(teamId);
  return { endpoint: view(ctx, row), secret };
}

/** Removes the endpoint; messages not yet delivered fail at their next attempt. */
export async function removeWebhookEndpoint(
  ctx: PlatformContext,
  actor: Actor,
  teamId: number,
): Promise<void> {
  await ownedTeam(ctx, actor, teamId);
  const result = await ctx.db
    .deleteFrom('webhook_endpoints')
    .where('team_id', '=', teamId)
    .executeTakeFirst();
  if (result.numDeletedRows === 0n) throw notSet(teamId);
}

/** For the delivery worker: where `team:<id>` sends now, with the secret opened. */
export function endpointResolver(ctx: PlatformContext) {
  return async (key: string): Promise<{ url: string; secret: string } | null> => {
    const teamId = teamOfEndpointKey(key);
    if (teamId === null) return null;
    const row = await endpointRow(ctx.db, teamId);
    if (!row) return null;
    return { url: row.url, secret: open(row.secret_sealed, webhooksOf(ctx).keys) };
  };
}
