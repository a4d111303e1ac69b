import { availableParallelism } from 'node:os';
import { type Change, hasBreaking } from '../../lib/openapi-diff/index.ts';
import { WorkerPool } from '../../lib/worker-pool.ts';

/** Work on stored documents (JSON text) that takes seconds for a big one. */
export type StoredDocumentJob =
  /** The changes from `base` to `revision`; `now` is what the sunset rule compares dates with. */
  | { readonly kind: 'diff'; readonly base: string; readonly revision: string; readonly now: string }
  /** The document as YAML text. */
  | { readonly kind: 'yaml'; readonly document: string };

/** The changes from one deploy's document to another's, as the API and the tables carry them. */
export interface DeployChanges {
  readonly changes: Change[];
  readonly breaking: boolean;
  /** The changes as stored (JSON text). */
  readonly json: string;
}

export const NO_CHANGES: DeployChanges = { changes: [], breaking: false, json: '[]' };

/**
 * The threads that diff and convert stored documents. Like the reading threads (deploys.ts),
 * process-wide and holding no thread until first used: diffing a big document takes about a
 * second, which must not stall the event loop every tenant is served from.
 */
const workers = new WorkerPool<StoredDocumentJob, string>(
  new URL('./stored-documents-worker.ts', import.meta.url),
  { size: Math.min(2, availableParallelism()), idleMs: 60_000, nice: 10 },
);

/** What changed from `base` to `revision` (both as stored: JSON text), off the event loop. */
export async function diffStoredDocuments(base: string, revision: string, now: Date): Promise<DeployChanges> {
  return fromJson(await workers.run({ kind: 'diff', base, revision, now: now.toISOString() }));
}

/** A stored document as YAML text, off the event loop. */
export function storedDocumentAsYaml(document: string): Promise<string> {
  return workers.run({ kind: 'yaml', document });
}

/** Stored changes (JSON text, or null for none) as the API carries them. */
export function fromJson(json: string | null): DeployChanges {
  if (json === null) return NO_CHANGES;
  const changes = JSON.parse(json) as Change[];
  return { changes, breaking: hasBreaking(changes), json };
}
