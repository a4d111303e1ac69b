/**
 * The worker thread that renders published sites (src/edge/published-site.ts): parsing the stored
 * document and writing the page, JSON and YAML, off the event loop that serves every tenant.
 */
import { serveWorkerJobs } from '../lib/worker-pool.ts';
import type { ReferenceFile } from '../web/reference/index.ts';
import { type RenderedSite, renderPublishedSite } from './published-site.ts';

serveWorkerJobs<{ document: string; urls: Readonly<Record<ReferenceFile, string>> }, RenderedSite>(
  async ({ document, urls }) => {
    const site = renderPublishedSite(document, urls);
    return { value: site, transfer: [site.page.buffer, site.json.buffer, site.yaml.buffer] };
  },
);
