/**
 * The worker thread that renders published sites (src/edge/published-site.ts): parsing the stored
 * document and writing the page, JSON and YAML, off the event loop that serves every tenant.
 */
import { serveWorkerJobs } from '../lib/worker-pool.ts';
import { type RenderedSite, type RenderRequest, renderPublishedSite } from './published-site.ts';

serveWorkerJobs<RenderRequest, RenderedSite>(async ({ document, urls, site }) => {
  const rendered = renderPublishedSite(document, urls, site);
  return { value: rendered, transfer: [rendered.page.buffer, rendered.json.buffer, rendered.yaml.buffer] };
});
