import type { IncomingMessage, ServerResponse } from 'node:http';
import { WorkerPool } from '../lib/worker-pool.ts';
import type { ChangeFeed, Change as ControlChange } from '../platform/changes.ts';
import type { PlatformDb } from '../platform/context.ts';
import { readDeployDocument, readPublishedProject } from '../platform/publishing/index.ts';
import {
  CHANGELOG_FEED_PATH,
  CHANGELOG_PATH,
  type Changelog,
  type ChangelogEntry,
  renderChangelogFeed,
  renderChangelogPage,
} from '../web/changelog/render-changelog.ts';
import { CompressedBody, type ReferenceAssets } from '../web/reference/index.ts';
import type { DocumentOutline } from './changelog-worker.ts';
import type { ProjectRoute } from './routing-table.ts';

export { CHANGELOG_FEED_PATH, CHANGELOG_PATH };

/** How many of the latest publications the page and the feed list. */
export const CHANGELOG_LIMIT = 50;

/** Reads a project's publications, newest first (src/platform/publishing: `listPublications`). */
export type ReadPublications = (
  db: PlatformDb,
  projectId: number,
  limit?: number,
) => Promise<readonly ChangelogEntry[]>;

/** The changelog's own policy: same-site styles and images only, no script at all. */
export const CHANGELOG_PAGE_CSP = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const outlines = new WorkerPool<string, DocumentOutline>(new URL('./changelog-worker.ts', import.meta.url), {
  size: 1,
  idleMs: 60_000,
  nice: 10,
});

interface Entry {
  readonly changelog: Promise<Changelog | undefined>;
  page?: CompressedBody;
  /** The feed by the origin it was read at (its links are absolute): a site has a few addresses. */
  readonly feeds: Map<string, CompressedBody>;
}

/**
 * Each published site's changelog, read and rendered once per project and live deploy. The feed
 * changes only when a publication is written, which also changes the live deploy and is announced
 * on the control plane's change feed; an entry is dropped on that announcement (a promotion back
 * to an earlier deploy makes an id live again, with one more publication than before).
 */
export class ChangelogCache {
  readonly #db: PlatformDb;
  readonly #assets: ReferenceAssets;
  readonly #platformDomain: string;
  readonly #readPublications: ReadPublications;
  /** By `projectId:deployId`: a project's live deploy and its previews are apart. */
  readonly #entries = new Map<string, Entry>();
  readonly #unsubscribe: () => void;

  constructor(deps: {
    db: PlatformDb;
    assets: ReferenceAssets;
    platformDomain: string;
    changes: ChangeFeed;
    readPublications: ReadPublications;
  }) {
    this.#db = deps.db;
    this.#assets = deps.assets;
    this.#platformDomain = deps.platformDomain;
    this.#readPublications = deps.readPublications;
    this.#unsubscribe = deps.changes.subscribe((change: ControlChange) => {
      if (change.kind === 'everything') this.#entries.clear();
      else if (change.kind === 'deploys' || change.kind === 'projects') this.#forgetProject(change.projectId);
    });
  }

  close(): void {
    this.#unsubscribe();
    this.#entries.clear();
  }

  /**
   * Answers `/changelog` (HTML) or `/changelog.atom` (Atom 1.0) for `route`; `origin` is the
   * site's address as the request reached it (`https://shop.example:8443`), for the feed's links.
   * False when the live deploy's document is gone (the caller answers 404).
   */
  async send(
    req: IncomingMessage,
    res: ServerResponse,
    route: ProjectRoute,
    path: string,
    origin: string,
    headers: Record<string, string>,
  ): Promise<boolean> {
    const entry = this.#entry(route);
    const changelog = await entry.changelog;
    if (!changelog) return false;
    if (path === CHANGELOG_FEED_PATH) {
      let feed = entry.feeds.get(origin);
      if (!feed) {
        feed = new CompressedBody(
          'application/atom+xml; charset=utf-8',
          Buffer.from(renderChangelogFeed(changelog, origin)),
        );
        feed.compressSoon();
        if (entry.feeds.size < 16) entry.feeds.set(origin, feed);
      }
      feed.send(req, res, { ...headers, 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' });
      return true;
    }
    if (!entry.page) {
      entry.page = new CompressedBody(
        'text/html; charset=utf-8',
        Buffer.from(renderChangelogPage(changelog, this.#assets)),
      );
      entry.page.compressSoon();
    }
    entry.page.send(req, res, {
      ...headers,
      'cache-control': 'no-cache',
      'content-security-policy': CHANGELOG_PAGE_CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    });
    return true;
  }

  #forgetProject(projectId: number): void {
    const prefix = `${projectId}:`;
    for (const key of this.#entries.keys()) if (key.startsWith(prefix)) this.#entries.delete(key);
  }

  #entry(route: ProjectRoute): Entry {
    const key = `${route.projectId}:${route.deployId}`;
    const cached = this.#entries.get(key);
    if (cached) return cached;
    const entry: Entry = { changelog: this.#load(route), feeds: new Map() };
    if (this.#entries.size > 1000) this.#entries.clear();
    this.#entries.set(key, entry);
    // A failed or missing load is not remembered: the next request tries again.
    const forget = () => {
      if (this.#entries.get(key) === entry) this.#entries.delete(key);
    };
    entry.changelog.then((found) => found ?? forget(), forget);
    return entry;
  }

  async #load(route: ProjectRoute): Promise<Changelog | undefined> {
    const [deploy, entries, project] = await Promise.all([
      readDeployDocument(this.#db, route.deployId),
      this.#readPublications(this.#db, route.projectId, CHANGELOG_LIMIT + 1),
      readPublishedProject(this.#db, route.projectId),
    ]);
    if (!deploy || !project) return undefined;
    const outline = await outlines.run(deploy.document);
    // One more than shown was read: when it is not there, the oldest shown is the first ever.
    const shown = entries.slice(0, CHANGELOG_LIMIT);
    const first = entries.length <= CHANGELOG_LIMIT ? shown.at(-1) : undefined;
    return {
      title: outline.title,
      version: outline.version,
      links: outline.links,
      entries: shown,
      // RFC 4151: the authority with a date it held the name (the project's creation), then the project.
      feedId: `tag:${this.#platformDomain},${new Date(project.createdAt).toISOString().slice(0, 10)}:projects/${route.projectId}/changelog`,
      updated: shown[0]?.publishedAt ?? deploy.createdAt,
      ...(first && { firstEntryId: first.id }),
    };
  }
}
