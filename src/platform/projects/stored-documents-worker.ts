/**
 * The worker thread for work on stored documents (src/platform/projects/stored-documents.ts):
 * diffing two deploys' documents, or writing one as YAML, off the event loop.
 */
import { stringify as toYaml } from 'yaml';
import { diffDocuments } from '../../lib/openapi-diff/index.ts';
import { serveWorkerJobs } from '../../lib/worker-pool.ts';
import type { StoredDocumentJob } from './stored-documents.ts';

serveWorkerJobs<StoredDocumentJob, string>(async (job) => {
  if (job.kind === 'yaml')
    return { value: toYaml(JSON.parse(job.document), { aliasDuplicateObjects: false }) };
  const changes = diffDocuments(JSON.parse(job.base), JSON.parse(job.revision), { now: new Date(job.now) });
  // As JSON text: what is stored, and one string crosses back faster than a graph of objects.
  return { value: JSON.stringify(changes) };
});
