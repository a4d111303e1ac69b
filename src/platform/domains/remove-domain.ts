import type { Transaction } from 'kysely';
import { normalizeHostname } from '../../lib/hostname.ts';
import { transact } from '../../storage/index.ts';
import { dropCertificate } from '../certificates/certificate-job.ts';
import type { Actor, PlatformContext } from '../context.ts';
import type { PlatformTables } from '../db-schema.ts';
import { projectFor } from '../projects/projects.ts';
import { type DomainRow, liveDomain, recordEvent } from './domain-store.ts';
import { transition } from './lifecycle.ts';

/**
 * Remove (seed 001): serving stops at once. The row stays, `removed`, for its history; redirects
 * from or to the hostname and a primary pointing at it go with it.
 */
export async function removeDomain(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  input: string,
): Promise<void> {
  const project = await projectFor(ctx, actor, slug);
  const hostname = normalizeHostname(input);
  const now = ctx.clock.now();
  await transact(ctx.db, async (trx) => {
    const row = await liveDomain(trx, project, hostname);
    await markRemoved(trx, now, actor, row, { was: row.state });
    await trx
      .deleteFrom('redirects')
      .where('project_id', '=', project.id)
      .where((eb) => eb.or([eb('from_host', '=', hostname), eb('to_host', '=', hostname)]))
      .execute();
    await trx
      .updateTable('projects')
      .set({ primary_domain: null })
      .where('id', '=', project.id)
      .where('primary_domain', '=', hostname)
      .execute();
  });
  ctx.changes.publish({ kind: 'domains', projectId: project.id });
}

/** The `remove` row of the lifecycle table, inside the caller's transaction. */
export async function markRemoved(
  trx: Transaction<PlatformTables>,
  now: Date,
  actor: Actor,
  row: DomainRow,
  detail: Record<string, unknown>,
): Promise<void> {
  const step = transition(row.state, 'remove');
  const removed = await trx
    .updateTable('domains')
    .set({ state: step.to, removed_at: now.toISOString(), next_check_at: null })
    .where('id', '=', row.id)
    .where('state', '<>', 'removed')
    .executeTakeFirst();
  // A remove that lost a race with another remove of the same domain changes nothing.
  if (removed.numUpdatedRows === 0n) return;
  await recordEvent(trx, now, row.id, actor, 'remove', step.to, detail);
  await dropCertificate(trx, row.id);
}
