/**
 * The worker thread that reads deployed documents (src/platform/projects/deploys.ts): parsing,
 * the limits, validation and the JSON to store, off the event loop that serves every tenant.
 */
import { serveWorkerJobs } from '../../lib/worker-pool.ts';
import { type ReadDocument, readOpenApiDocument } from './deploys.ts';
import type { DocumentLimits } from './document-limits.ts';

serveWorkerJobs<{ source: string; limits: DocumentLimits }, ReadDocument>(async ({ source, limits }) => {
  const { document, ...read } = await readOpenApiDocument(source, limits);
  return { value: { ...read, json: document ? JSON.stringify(document) : null } };
});
