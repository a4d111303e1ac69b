import type { Transaction } from 'kysely';
import type { Dialect } from '../../storage/index.ts';
import type { PlatformContext } from '../context.ts';
import type { PlatformTables } from '../db-schema.ts';
import { platformErrors } from '../errors.ts';
import { recordPublication } from '../publishing/publications.ts';
import {
  breakingOperations,
  type GateTraffic,
  readOperationTraffic,
  withTraffic,
} from '../traffic/read-operation-traffic.ts';
import { emitEvent } from '../webhooks/webhook-events.ts';
import type { Project } from './projects.ts';
import { type DeployChanges, diffStoredDocuments } from './stored-documents.ts';

/**
 * Making a deploy live, the one way deploys and promotions share: the gate, the project's
 * pointer, the publication (the changelog's row) and the team's `deploy.published` event, in one
 * transaction, so each exists exactly when the live deploy changed.
 */

/** The live deploy a change was computed against, and its document (JSON text). */
export interface LiveDeploy {
  readonly id: number;
  readonly document: string;
}

export async function readLiveDeploy(
  db: PlatformContext['db'],
  projectId: number,
): Promise<LiveDeploy | undefined> {
  const row = await db
    .selectFrom('projects')
    .innerJoin('deploys', 'deploys.id', 'projects.active_deploy_id')
    .select(['deploys.id', 'deploys.document'])
    .where('projects.id', '=', projectId)
    .executeTakeFirst();
  return row?.document ? { id: Number(row.id), document: row.document } : undefined;
}

/**
 * Locks the project for a change of its deploys (PostgreSQL; SQLite has one writer) and reads its
 * live deploy's id: changes computed outside the transaction hold only while it is the one they
 * were computed against.
 */
export async function lockProject(
  trx: Transaction<PlatformTables>,
  dialect: Dialect,
  projectId: number,
): Promise<number | null> {
  let query = trx.selectFrom('projects').select('active_deploy_id').where('id', '=', projectId);
  if (dialect === 'postgres') query = query.forUpdate();
  const row = await query.executeTakeFirstOrThrow();
  return row.active_deploy_id === null ? null : Number(row.active_deploy_id);
}

/** Thrown inside a transaction when the live deploy moved since the changes were computed. */
export class LiveDeployMoved extends Error {}

/**
 * Runs `attempt` (compute changes against the live deploy, then write in a transaction that
 * throws LiveDeployMoved when it moved meanwhile) until the live deploy holds still. Two
 * publishers of one project racing is rare; a few rounds settle it.
 */
export async function withSettledLiveDeploy<T>(attempt: () => Promise<T>): Promise<T> {
  for (let round = 1; ; round++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof LiveDeployMoved) || round >= 5) throw error;
    }
  }
}

/**
 * The 409 of the gate: the changes that would break callers (each breaking one with its
 * operation's traffic of the last 7 days), how many calls they would hit, and how to publish anyway.
 */
export function breakingRefusal(what: string, changes: DeployChanges, force: string, traffic: GateTraffic) {
  const breaking = changes.changes.filter((c) => c.level === 'breaking');
  const first = breaking
    .slice(0, 3)
    .map((c) => (c.operation ? `${c.operation}: ${c.message}` : c.message))
    .join('; ');
  const more = breaking.length > 3 ? ` (and ${breaking.length - 3} more)` : '';
  const { requests, callers } = traffic.total;
  const hit =
    traffic.byOperation.size === 0 && requests === 0
      ? breaking.some((c) => c.operation)
        ? ' Nobody called the operations they touch in the last 7 days.'
        : ''
      : ` The operations they touch had ${requests} call${requests === 1 ? '' : 's'} from ${callers} caller${callers === 1 ? '' : 's'} in the last 7 days.`;
  return platformErrors.error(
    'breaking_changes',
    `${what} would break callers of the live API with ${breaking.length} breaking change${breaking.length === 1 ? '' : 's'}: ${first}${more}.${hit} Nothing changed; ${force}.`,
    { details: { changes: withTraffic(changes.changes, traffic) } },
  );
}

/** The last 7 days' traffic of the operations the breaking changes name (the gate's join). */
export function gateTraffic(
  ctx: PlatformContext,
  projectId: number,
  changes: DeployChanges,
): Promise<GateTraffic> {
  return readOperationTraffic(ctx.db, projectId, breakingOperations(changes.changes), ctx.clock.now());
}

/**
 * Points the project at `deploy`, records the publication and enqueues `deploy.published`, in
 * `trx`. Returns whether a webhook message was enqueued (the caller wakes the worker after commit).
 */
export async function makeLive(
  ctx: PlatformContext,
  trx: Transaction<PlatformTables>,
  input: {
    project: { id: number; teamId: number; slug: string };
    deploy: { id: number; number: number; originUrl: string; createdBy: string | null };
    changes: DeployChanges;
    actor: { userId: number; email: string } | null;
  },
): Promise<{ publicationId: number; webhook: boolean }> {
  const at = ctx.clock.now();
  await trx
    .updateTable('projects')
    .set({ active_deploy_id: input.deploy.id, origin_url: input.deploy.originUrl })
    .where('id', '=', input.project.id)
    .execute();
  const publicationId = await recordPublication(trx, {
    projectId: input.project.id,
    deploy: input.deploy,
    publishedAt: at,
    publishedBy: input.actor?.userId ?? null,
    changes: input.changes.json,
    breaking: input.changes.breaking,
  });
  const message = await emitEvent(trx, at, {
    teamId: input.project.teamId,
    type: 'deploy.published',
    subject: `project:${input.project.id}`,
    data: {
      project: input.project.slug,
      deploy: { id: input.deploy.id, number: input.deploy.number, createdBy: input.deploy.createdBy },
      publishedBy: input.actor?.email ?? null,
      changes: input.changes.changes,
      breaking: input.changes.breaking,
    },
  });
  return { publicationId, webhook: message !== null };
}

/**
 * The changes of a valid document (JSON text) against the project's live deploy, as of now: what
 * a deploy and a promotion gate and publish (null when nothing is live).
 */
export async function changesAgainstLive(ctx: PlatformContext, project: Project, json: string) {
  const live = await readLiveDeploy(ctx.db, project.id);
  const changes = live ? await diffStoredDocuments(live.document, json, ctx.clock.now()) : null;
  return { liveId: live?.id ?? null, changes };
}

/**
 * The gate a deploy and a promotion share: changes that would break callers are refused with 409
 * breaking_changes, each with its operation's traffic; `force` says how to publish anyway.
 */
export async function refuseBreaking(
  ctx: PlatformContext,
  projectId: number,
  changes: DeployChanges | null,
  what: string,
  force: string,
): Promise<void> {
  if (changes?.breaking)
    throw breakingRefusal(what, changes, force, await gateTraffic(ctx, projectId, changes));
}
