import type { Change } from '../../lib/openapi-diff/index.ts';
import type { PlatformDb } from '../context.ts';
import { platformErrors } from '../errors.ts';
import { fromJson } from './stored-documents.ts';

/** What the API shows of a deploy besides what it was (deploys.ts): where it stands among the others. */
export interface DeployFacts {
  /** Counts the project's deploys from 1. */
  number: number;
  /** Made as a preview: it went live only if promoted since. */
  preview: boolean;
  /** The email of who made it; null for the system (or an account since deleted). */
  createdBy: string | null;
  /** Against the deploy live when it was made (none for a project's first, or a failed one). */
  changes: Change[];
  breaking: boolean;
}

/** A project's deploys with their author's email, as `toDeploy` reads them. */
export function selectDeploys(db: PlatformDb, projectId: number) {
  return db
    .selectFrom('deploys')
    .leftJoin('users', 'users.id', 'deploys.created_by')
    .select([
      'deploys.id',
      'deploys.number',
      'deploys.status',
      'deploys.origin_url',
      'deploys.source_format',
      'deploys.problems',
      'deploys.preview',
      'deploys.changes',
      'deploys.breaking',
      'deploys.created_at',
      'users.email',
    ])
    .where('deploys.project_id', '=', projectId);
}

export type DeployRow = Awaited<ReturnType<ReturnType<typeof selectDeploys>['executeTakeFirstOrThrow']>>;

export function deployFacts(row: DeployRow): DeployFacts {
  const { changes, breaking } = fromJson(row.changes);
  return {
    number: Number(row.number),
    preview: Number(row.preview) === 1,
    createdBy: row.email ?? null,
    changes,
    breaking,
  };
}

export function deployNotFound(slug: string, id: number) {
  return platformErrors.error(
    'deploy_not_found',
    `Project ${slug} has no deploy ${id}: check the id against the project's list of deploys.`,
  );
}
