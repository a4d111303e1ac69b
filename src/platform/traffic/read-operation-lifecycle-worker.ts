/**
 * The worker thread that reads which operations of a big stored document are deprecated
 * (read-operation-lifecycle.ts): parsing it takes a second, off the event loop.
 */
import { serveWorkerJobs } from '../../lib/worker-pool.ts';
import { type DeprecatedOperations, deprecatedOperationsOf } from './read-operation-lifecycle.ts';

serveWorkerJobs<{ document: string }, DeprecatedOperations>(async ({ document }) => ({
  value: deprecatedOperationsOf(document),
}));
