/**
 * The worker thread that reads what the changelog needs from a deploy's stored document (its title
 * and where each operation lives in the reference): parsing a big document takes long enough to
 * stall every tenant if done on the event loop (src/edge/changelog.ts).
 */
import { serveWorkerJobs } from '../lib/worker-pool.ts';
import { operationLinks } from '../web/changelog/operation-links.ts';

export interface DocumentOutline {
  readonly title: string;
  readonly version: string;
  readonly links: Record<string, string>;
}

serveWorkerJobs<string, DocumentOutline>(async (documentJson) => {
  const document = JSON.parse(documentJson) as Record<string, unknown>;
  const info = (document.info ?? {}) as { title?: unknown; version?: unknown };
  return {
    value: {
      title: typeof info.title === 'string' && info.title.trim() !== '' ? info.title : 'API',
      version: typeof info.version === 'string' ? info.version : '',
      links: operationLinks(document),
    },
  };
});
