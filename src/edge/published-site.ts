import type { IncomingMessage, ServerResponse } from 'node:http';
import { availableParallelism } from 'node:os';
import { stringify } from 'yaml';
import { WorkerPool } from '../lib/worker-pool.ts';
import type { PlatformDb } from '../platform/context.ts';
import { readDeployDocument } from '../platform/publishing/index.ts';
import {
  CompressedBody,
  REFERENCE_FILES,
  REFERENCE_PAGE_CSP,
  type ReferenceAssets,
  type ReferenceFile,
  referenceAssets,
  renderReferencePage,
} from '../web/reference/index.ts';

export interface PublishedDocument {
  /** `/openapi.json` and `/openapi.yaml`, compressed once per deploy like the page. */
  readonly json: CompressedBody;
  readonly yaml: CompressedBody;
  /** The reference page (`/`), rendered and compressed once per deploy. */
  readonly page: CompressedBody;
}

/**
 * The document as the site publishes it: its API is served under `/api` on whichever host the
 * document was fetched from, so `servers` says exactly that (a relative URL, resolved against the
 * document's own address, as OpenAPI specifies), and servers of paths and operations, which name
 * the origin the edge proxies to, are removed. A client generated from it calls the site.
 */
export function atSiteApi(document: Record<string, unknown>): Record<string, unknown> {
  const paths = document.paths as Record<string, Record<string, unknown>> | undefined;
  const sitePaths: Record<string, unknown> = {};
  for (const [template, item] of Object.entries(paths ?? {})) {
    if (item === null || typeof item !== 'object') {
      sitePaths[template] = item;
      continue;
    }
    const { servers: _servers, ...rest } = item;
    for (const [key, operation] of Object.entries(rest)) {
      if (operation !== null && typeof operation === 'object' && 'servers' in operation) {
        const { servers: _operationServers, ...kept } = operation as Record<string, unknown>;
        rest[key] = kept;
      }
    }
    sitePaths[template] = rest;
  }
  return {
    ...document,
    servers: [{ url: '/api', description: 'The API on this site' }],
    ...(paths !== undefined && { paths: sitePaths }),
  };
}

/** A deploy's published texts as UTF-8, each in a buffer of its own (moved, not copied, between threads). */
export interface RenderedSite {
  readonly page: Uint8Array<ArrayBuffer>;
  readonly json: Uint8Array<ArrayBuffer>;
  readonly yaml: Uint8Array<ArrayBuffer>;
}

/**
 * Renders what a site publishes from a deploy's stored document: the reference page (asset URLs
 * from `urls`), `/openapi.json` and `/openapi.yaml`. Seconds for a big document: it runs in a
 * worker thread (render-published-worker.ts).
 */
export function renderPublishedSite(
  documentJson: string,
  urls: Readonly<Record<ReferenceFile, string>>,
): RenderedSite {
  const document = JSON.parse(documentJson) as Record<string, unknown>;
  const utf8 = new TextEncoder();
  const page = utf8.encode(renderReferencePage(document, { url: (name) => urls[name] }));
  const published = atSiteApi(document);
  const json = utf8.encode(JSON.stringify(published, null, 2));
  const yaml = utf8.encode(stringify(published, { aliasDuplicateObjects: false, lineWidth: 0 }));
  return { page, json, yaml };
}

/**
 * The threads rendering published sites: the first request for a big deploy's site must not stall
 * the loop serving every other site (docs/security.md). Process-wide and idle-ending, like the
 * pool that reads deployed documents.
 */
const siteRenderers = new WorkerPool<
  { document: string; urls: Readonly<Record<ReferenceFile, string>> },
  RenderedSite
>(new URL('./render-published-worker.ts', import.meta.url), {
  size: Math.min(2, availableParallelism()),
  idleMs: 60_000,
  nice: 10,
});

const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** Brotli's best for the usual document; a fast quality past a megabyte (see CompressedBody). */
const brotliQualityFor = (bytes: Uint8Array) => (bytes.byteLength > 1024 * 1024 ? 5 : 11);

/**
 * The deployed OpenAPI documents, by deploy id. Deploys are immutable, so an entry never goes
 * stale; a new deploy is a new id.
 */
export class DocumentCache {
  readonly #db: PlatformDb;
  readonly #assets: ReferenceAssets;
  readonly #entries = new Map<number, Promise<PublishedDocument | undefined>>();

  constructor(db: PlatformDb, assets: ReferenceAssets = referenceAssets()) {
    this.#db = db;
    this.#assets = assets;
  }

  get(deployId: number): Promise<PublishedDocument | undefined> {
    const cached = this.#entries.get(deployId);
    if (cached) return cached;
    const loading = this.#load(deployId);
    if (this.#entries.size > 1000) this.#entries.clear();
    this.#entries.set(deployId, loading);
    // A failed or missing load is not remembered: the next request tries again.
    loading.then(
      (entry) => entry ?? this.#entries.delete(deployId),
      () => this.#entries.delete(deployId),
    );
    return loading;
  }

  async #load(deployId: number): Promise<PublishedDocument | undefined> {
    const row = await readDeployDocument(this.#db, deployId);
    if (!row) return undefined;
    const urls = Object.fromEntries(REFERENCE_FILES.map((name) => [name, this.#assets.url(name)]));
    const rendered = await siteRenderers.run({
      document: row.document,
      urls: urls as Record<ReferenceFile, string>,
    });
    const body = (type: string, bytes: Uint8Array) =>
      new CompressedBody(type, asBuffer(bytes), { brotliQuality: brotliQualityFor(bytes) });
    const page = body('text/html; charset=utf-8', rendered.page);
    const json = body('application/json; charset=utf-8', rendered.json);
    const yaml = body('application/yaml; charset=utf-8', rendered.yaml);
    await Promise.all([page.compress(), json.compress(), yaml.compress()]);
    return { page, json, yaml };
  }
}

/**
 * Answers `/` with the reference page. `no-cache`: browsers revalidate (a new deploy changes the
 * page, and its ETag) while the assets it loads are cached for a year under versioned URLs.
 */
export function sendReferencePage(
  req: IncomingMessage,
  res: ServerResponse,
  published: PublishedDocument,
  requestId: string,
): void {
  published.page.send(req, res, {
    'cache-control': 'no-cache',
    'content-security-policy': REFERENCE_PAGE_CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-request-id': requestId,
  });
}
