import { availableParallelism } from 'node:os';
import { OPERATION_METHODS } from '../../lib/operation-matcher.ts';
import { WorkerPool } from '../../lib/worker-pool.ts';
import type { PlatformDb } from '../context.ts';

/**
 * Which operations of a project's live document are deprecated, and their sunset: what the
 * traffic views mark and what deprecation reach and its daily notice are about. An operation is
 * named as traffic names it, `METHOD /template` (`GET /pets/{petId}`); the sunset is the one the
 * edge enforces (`x-sunset`, or GitBook's `x-deprecated-sunset`: src/edge/lifecycle.ts).
 */
export interface DeprecatedOperation {
  /** ISO date and time, or null when the document gives none (deprecated, no end announced). */
  readonly sunset: string | null;
}

/** The deprecated operations of one document, by `METHOD /template`. */
export type DeprecatedOperations = Readonly<Record<string, DeprecatedOperation>>;

const parseDate = (value: unknown): string | null => {
  if (typeof value !== 'string') return null;
  const at = Date.parse(value);
  return Number.isFinite(at) ? new Date(at).toISOString() : null;
};

/** The deprecated operations of a stored document (JSON text). */
export function deprecatedOperationsOf(documentJson: string): DeprecatedOperations {
  const document = JSON.parse(documentJson) as { paths?: unknown };
  const found: Record<string, DeprecatedOperation> = {};
  if (document.paths === null || typeof document.paths !== 'object') return found;
  for (const [template, item] of Object.entries(document.paths as Record<string, unknown>)) {
    if (item === null || typeof item !== 'object') continue;
    for (const method of OPERATION_METHODS) {
      const operation = (item as Record<string, unknown>)[method] as Record<string, unknown> | undefined;
      if (operation === null || typeof operation !== 'object' || operation.deprecated !== true) continue;
      found[`${method.toUpperCase()} ${template}`] = {
        sunset: parseDate(operation['x-sunset'] ?? operation['x-deprecated-sunset']),
      };
    }
  }
  return found;
}

/** Documents up to this size are read on the event loop (a few milliseconds); bigger ones in a thread. */
const INLINE_BYTES = 256 * 1024;

/** Threads reading big documents, idle-ending like the deploy readers (src/platform/projects/deploys.ts). */
const readers = new WorkerPool<{ document: string }, DeprecatedOperations>(
  new URL('./read-operation-lifecycle-worker.ts', import.meta.url),
  { size: Math.min(2, availableParallelism()), idleMs: 60_000, nice: 10 },
);

/**
 * Answers by database and deploy id: a deploy never changes, so what its document says is read
 * once. Process-wide like the reading threads, and small: a few entries per live project, the
 * oldest dropped.
 */
const byDatabase = new WeakMap<PlatformDb, Map<number, Promise<DeprecatedOperations>>>();
const KEPT_DEPLOYS = 500;

/** The deprecated operations of the project's live deploy (none when nothing is live). */
export async function readDeprecatedOperations(
  db: PlatformDb,
  projectId: number,
): Promise<DeprecatedOperations> {
  const live = await db
    .selectFrom('projects')
    .select('active_deploy_id')
    .where('id', '=', projectId)
    .executeTakeFirst();
  const deployId = live?.active_deploy_id == null ? null : Number(live.active_deploy_id);
  if (deployId === null) return {};
  let byDeploy = byDatabase.get(db);
  if (!byDeploy) {
    byDeploy = new Map();
    byDatabase.set(db, byDeploy);
  }
  const cache = byDeploy;
  let answer = cache.get(deployId);
  if (!answer) {
    answer = (async () => {
      const row = await db
        .selectFrom('deploys')
        .select('document')
        .where('id', '=', deployId)
        .executeTakeFirst();
      if (!row?.document) return {};
      return row.document.length <= INLINE_BYTES
        ? deprecatedOperationsOf(row.document)
        : readers.run({ document: row.document });
    })();
    cache.set(deployId, answer);
    answer.catch(() => cache.delete(deployId));
    if (cache.size > KEPT_DEPLOYS) cache.delete(cache.keys().next().value as number);
  }
  return answer;
}
