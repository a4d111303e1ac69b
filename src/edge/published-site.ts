import type { IncomingMessage, ServerResponse } from 'node:http';
import { stringify } from 'yaml';
import type { PlatformDb } from '../platform/context.ts';
import { readDeployDocument } from '../platform/publishing/index.ts';
import {
  CompressedBody,
  REFERENCE_PAGE_CSP,
  type ReferenceAssets,
  referenceAssets,
  renderReferencePage,
} from '../web/reference/index.ts';

export interface PublishedDocument {
  /** `/openapi.json` and `/openapi.yaml`, compressed once per deploy like the page. */
  readonly json: CompressedBody;
  readonly yaml: CompressedBody;
  readonly document: Record<string, unknown>;
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
    const document = JSON.parse(row.document) as Record<string, unknown>;
    const page = new CompressedBody(
      'text/html; charset=utf-8',
      Buffer.from(renderReferencePage(document, this.#assets)),
    );
    const published = atSiteApi(document);
    const json = new CompressedBody(
      'application/json; charset=utf-8',
      Buffer.from(JSON.stringify(published, null, 2)),
    );
    const yaml = new CompressedBody(
      'application/yaml; charset=utf-8',
      Buffer.from(stringify(published, { aliasDuplicateObjects: false, lineWidth: 0 })),
    );
    await Promise.all([page.compress(), json.compress(), yaml.compress()]);
    return { document, page, json, yaml };
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
