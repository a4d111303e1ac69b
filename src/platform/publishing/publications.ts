import type { Transaction } from 'kysely';
import type { Change } from '../../lib/openapi-diff/index.ts';
import type { Publication } from '../api-types.ts';
import type { PlatformDb } from '../context.ts';
import type { PlatformTables } from '../db-schema.ts';

/**
 * One change of a project's live deploy: a deploy that went live, or a promotion, with the
 * changes against the deploy live before (none for the first). The changelog is these, newest
 * first. A publication keeps its own copy of the changes and the deploy's number, so it outlives
 * the deploy when retention prunes it (`deployId` then names no deploy).
 */
export type { Publication } from '../api-types.ts';

/** A project's publications, newest first. */
export async function listPublications(
  db: PlatformDb,
  projectId: number,
  limit = 100,
): Promise<Publication[]> {
  const rows = await db
    .selectFrom('publications')
    .leftJoin('users', 'users.id', 'publications.published_by')
    .select([
      'publications.id',
      'publications.deploy_id',
      'publications.deploy_number',
      'publications.published_at',
      'users.email',
      'publications.changes',
      'publications.breaking',
    ])
    .where('publications.project_id', '=', projectId)
    .orderBy('publications.id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    id: Number(row.id),
    deployId: Number(row.deploy_id),
    deployNumber: Number(row.deploy_number),
    publishedAt: row.published_at,
    publishedBy: row.email ?? null,
    changes: JSON.parse(row.changes) as Change[],
    breaking: Number(row.breaking) === 1,
  }));
}

/** Records that `deploy` became the project's live deploy; in the transaction that makes it so. */
export async function recordPublication(
  trx: Transaction<PlatformTables>,
  entry: {
    projectId: number;
    deploy: { id: number; number: number };
    publishedAt: Date;
    publishedBy: number | null;
    /** The changes as stored: JSON Change[]. */
    changes: string;
    breaking: boolean;
  },
): Promise<number> {
  const row = await trx
    .insertInto('publications')
    .values({
      project_id: entry.projectId,
      deploy_id: entry.deploy.id,
      deploy_number: entry.deploy.number,
      published_at: entry.publishedAt.toISOString(),
      published_by: entry.publishedBy,
      changes: entry.changes,
      breaking: entry.breaking ? 1 : 0,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}
