/**
 * The worker thread that reduces a stored document to its lifecycle skeleton (src/edge/
 * lifecycle.ts): parsing a big document, off the event loop that serves every tenant.
 */
import { serveWorkerJobs } from '../lib/worker-pool.ts';
import { lifecycleSkeleton } from './lifecycle.ts';

serveWorkerJobs<{ document: string }, Record<string, unknown>>(async ({ document }) => ({
  value: lifecycleSkeleton(document),
}));
