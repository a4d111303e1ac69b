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

/** Where a site's published document sends its callers. */
export interface SiteApi {
  /** The site's absolute API address, e.g. `https://shop.example.com/api`. */
  readonly url: string;
  /** The origin the edge forwards the API to: servers naming its host are the site's API. */
  readonly originUrl: string;
}

/** The host a server URL names, its variables at their defaults; undefined for a relative URL. */
function serverHost(server: unknown): string | undefined {
  if (server === null || typeof server !== 'object') return undefined;
  const { url, variables } = server as { url?: unknown; variables?: Record<string, { default?: unknown }> };
  if (typeof url !== 'string') return undefined;
  const filled = url.replace(/\{([^}]*)\}/g, (_, name: string) => String(variables?.[name]?.default ?? ''));
  try {
    return new URL(filled).host.toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * The document as the site publishes it: its API is served under `/api` of the site, so
 * `servers` names the site's absolute API address first (a generated client needs no base URL by
 * hand) and the same relative to wherever the document was fetched. Servers of paths and
 * operations that name the origin the edge forwards to (or the document's own top-level servers)
 * are the site's API too, and go; those naming other hosts (Stripe's `files.stripe.com` for
 * uploads) are the publisher's and are kept.
 */
export function atSiteApi(document: Record<string, unknown>, site: SiteApi): Record<string, unknown> {
  const replaced = new Set<string>();
  const originHost = serverHost({ url: site.originUrl });
  if (originHost) replaced.add(originHost);
  for (const server of Array.isArray(document.servers) ? document.servers : []) {
    const host = serverHost(server);
    if (host) replaced.add(host);
  }
  /** The servers a path or operation keeps: undefined when none is left. */
  const elsewhere = (servers: unknown) => {
    const kept = Array.isArray(servers)
      ? servers.filter((server) => {
          const host = serverHost(server);
          return host !== undefined && !replaced.has(host);
        })
      : [];
    return kept.length > 0 ? kept : undefined;
  };
  const paths = document.paths as Record<string, Record<string, unknown>> | undefined;
  const sitePaths: Record<string, unknown> = {};
  for (const [template, item] of Object.entries(paths ?? {})) {
    if (item === null || typeof item !== 'object') {
      sitePaths[template] = item;
      continue;
    }
    const { servers, ...rest } = item;
    const pathServers = elsewhere(servers);
    if (pathServers) rest.servers = pathServers;
    for (const [key, operation] of Object.entries(rest)) {
      if (operation !== null && typeof operation === 'object' && 'servers' in operation) {
        const { servers: operationServers, ...kept } = operation as Record<string, unknown>;
        const own = elsewhere(operationServers);
        rest[key] = own ? { ...kept, servers: own } : kept;
      }
    }
    sitePaths[template] = rest;
  }
  return {
    ...document,
    servers: [
      { url: site.url, description: 'The API on this site' },
      { url: '/api', description: 'The API on this site, relative to the address of this document' },
    ],
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
 * from `urls`), `/openapi.json` and `/openapi.yaml` (at `site`'s API). Seconds for a big document:
 * it runs in a worker thread (render-published-worker.ts).
 */
export function renderPublishedSite(
  documentJson: string,
  urls: Readonly<Record<ReferenceFile, string>>,
  site: SiteApi,
): RenderedSite {
  const document = JSON.parse(documentJson) as Record<string, unknown>;
  const utf8 = new TextEncoder();
  const page = utf8.encode(renderReferencePage(document, { url: (name) => urls[name] }));
  const published = atSiteApi(document, site);
  const json = utf8.encode(JSON.stringify(published, null, 2));
  const yaml = utf8.encode(stringify(published, { aliasDuplicateObjects: false, lineWidth: 0 }));
  return { page, json, yaml };
}

/** What the render worker is asked: a site to render. */
export interface RenderRequest {
  readonly document: string;
  readonly urls: Readonly<Record<ReferenceFile, string>>;
  readonly site: SiteApi;
}

/**
 * The threads rendering published sites: the first request for a big deploy's site must not stall
 * the loop serving every other site (docs/security.md). Process-wide and idle-ending, like the
 * pool that reads deployed documents.
 */
const siteRenderers = new WorkerPool<RenderRequest, RenderedSite>(
  new URL('./render-published-worker.ts', import.meta.url),
  { size: Math.min(2, availableParallelism()), idleMs: 60_000, nice: 10 },
);

const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** Brotli's best for the usual document; a fast quality past a megabyte (see CompressedBody). */
const brotliQualityFor = (bytes: Uint8Array) => (bytes.byteLength > 1024 * 1024 ? 5 : 11);

/** The deploy a cached site belongs to, as the edge's route names it. */
export interface PublishedDeploy {
  readonly projectId: number;
  readonly deployId: number;
  readonly originUrl: string;
  readonly preview?: true;
}

interface Entry {
  readonly deploy: PublishedDeploy;
  readonly host: string;
  readonly apiUrl: string;
  readonly loading: Promise<PublishedDocument | undefined>;
  /** What the entry holds once loaded (texts and their compressed copies), 0 before. */
  bytes: number;
}

/** The texts and their gzip and brotli copies (compressed, about half again at most). */
const bytesOf = (published: PublishedDocument) =>
  Math.ceil(
    1.5 *
      (published.page.identity.byteLength +
        published.json.identity.byteLength +
        published.yaml.identity.byteLength),
  );

/**
 * The published sites, by deploy and site address. Deploys are immutable, so an entry never goes
 * stale; but a project's old deploys are no longer served, so when the edge learns that a
 * project's live deploy changed (`deployed`) its entries go and the new deploy is rendered at
 * once, before its first request. Previews stay while they are viewed; the least recently used
 * entries go once the cache holds more than `maxBytes`.
 */
export class DocumentCache {
  readonly #db: PlatformDb;
  readonly #assets: ReferenceAssets;
  readonly #maxBytes: number;
  /** In order of use, least recent first. */
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;

  constructor(
    db: PlatformDb,
    assets: ReferenceAssets = referenceAssets(),
    options: { maxBytes?: number } = {},
  ) {
    this.#db = db;
    this.#assets = assets;
    this.#maxBytes = options.maxBytes ?? 512 * 1024 * 1024;
  }

  /** The bytes the cache holds, for tests and metrics. */
  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Whether the site of `deployId` is rendered or being rendered (for any address). */
  holds(deployId: number): boolean {
    for (const entry of this.#entries.values()) if (entry.deploy.deployId === deployId) return true;
    return false;
  }

  /** The site of `deploy` on `host`, whose API is `apiUrl`. */
  get(deploy: PublishedDeploy, host: string, apiUrl: string): Promise<PublishedDocument | undefined> {
    const key = `${deploy.deployId} ${apiUrl}`;
    const cached = this.#entries.get(key);
    if (cached) {
      this.#entries.delete(key);
      this.#entries.set(key, cached);
      return cached.loading;
    }
    const loading = this.#load(deploy, apiUrl);
    const entry: Entry = { deploy, host, apiUrl, loading, bytes: 0 };
    this.#entries.set(key, entry);
    loading.then(
      (published) => {
        if (this.#entries.get(key) !== entry) return;
        // A failed or missing load is not remembered: the next request tries again.
        if (!published) return this.#remove(key);
        entry.bytes = bytesOf(published);
        this.#bytes += entry.bytes;
        this.#trim(key);
      },
      () => this.#remove(key),
    );
    return loading;
  }

  /**
   * A project's live deploy changed (or, for `projectId` 0, anything may have): its cached sites
   * go, and each address they were served on is rendered again for whatever `lookup` now routes
   * there, so the first request after a deploy finds the rendering done or under way.
   */
  deployed(
    projectId: number,
    lookup: (host: string) => PublishedDeploy | undefined | Promise<PublishedDeploy | undefined>,
    /** The project's default address, rendered when none of its addresses was cached (a new site). */
    defaultAddress?: (projectId: number) => Promise<{ host: string; apiUrl: string } | undefined>,
  ): void {
    const addresses = new Map<string, string>();
    for (const [key, entry] of this.#entries) {
      if (entry.deploy.preview || (projectId !== 0 && entry.deploy.projectId !== projectId)) continue;
      addresses.set(entry.apiUrl, entry.host);
      this.#remove(key);
    }
    const render = (host: string, apiUrl: string) =>
      Promise.resolve(lookup(host))
        .then((deploy) => (deploy && !deploy.preview ? this.get(deploy, host, apiUrl) : undefined))
        .catch(() => undefined);
    for (const [apiUrl, host] of addresses) void render(host, apiUrl);
    if (addresses.size === 0 && projectId !== 0 && defaultAddress) {
      void defaultAddress(projectId)
        .then((address) => (address ? render(address.host, address.apiUrl) : undefined))
        .catch(() => undefined);
    }
  }

  #remove(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }

  /** Drops the least recently used entries past the bound, never `keep` (the one just loaded). */
  #trim(keep: string): void {
    for (const key of this.#entries.keys()) {
      if (this.#bytes <= this.#maxBytes) return;
      if (key !== keep) this.#remove(key);
    }
  }

  async #load(deploy: PublishedDeploy, apiUrl: string): Promise<PublishedDocument | undefined> {
    const row = await readDeployDocument(this.#db, deploy.deployId);
    if (!row) return undefined;
    const urls = Object.fromEntries(REFERENCE_FILES.map((name) => [name, this.#assets.url(name)]));
    const rendered = await siteRenderers.run({
      document: row.document,
      urls: urls as Record<ReferenceFile, string>,
      site: { url: apiUrl, originUrl: deploy.originUrl },
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
