import type { Change } from '../../lib/openapi-diff/index.ts';
import type { PlatformDb } from '../context.ts';

/** What a preview's page says about it: its number, whether it went live, its changes. */
export interface PreviewFacts {
  readonly number: number;
  /** Promoted since: it is the project's live deploy. */
  readonly live: boolean;
  /** The number of the project's live deploy, if it has one. */
  readonly liveNumber: number | null;
  /** Against the deploy live when it was made (stored with it), none for a first deploy. */
  readonly changes: readonly Change[];
}

export async function readPreviewFacts(db: PlatformDb, deployId: number): Promise<PreviewFacts> {
  const row = await db
    .selectFrom('deploys')
    .innerJoin('projects', 'projects.id', 'deploys.project_id')
    .leftJoin('deploys as live', 'live.id', 'projects.active_deploy_id')
    .select(['deploys.number', 'deploys.changes', 'projects.active_deploy_id', 'live.number as live_number'])
    .where('deploys.id', '=', deployId)
    .executeTakeFirst();
  return {
    number: Number(row?.number ?? 0),
    live: row !== undefined && Number(row.active_deploy_id) === deployId,
    liveNumber: row?.live_number === null || row?.live_number === undefined ? null : Number(row.live_number),
    changes: row?.changes ? (JSON.parse(row.changes) as Change[]) : [],
  };
}
