import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import {
  CompressedBody,
  REFERENCE_PAGE_CSP,
  referenceAssets,
  renderReferencePage,
} from '../src/web/reference/index.ts';

/** GitHub's REST description (@octokit/openapi, ~1,100 operations, ~13 MB): the large document. */
export function githubDocument(): Record<string, unknown> {
  const file = createRequire(import.meta.url).resolve('@octokit/openapi/generated/api.github.com.json');
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
}

/**
 * Serves the reference page of `document` as the edge does (the page, rendered once, and the
 * versioned assets) on loopback, without a platform: the large document's size is over what a
 * deploy accepts by default, and what is measured here is the page, not the deploy.
 */
export async function serveReference(
  document: Record<string, unknown>,
): Promise<{ url: string; close(): void }> {
  const assets = referenceAssets();
  const html = Buffer.from(renderReferencePage(document, assets));
  // Compressed as the edge compresses a deploy's page (src/edge/published-site.ts).
  const page = new CompressedBody('text/html; charset=utf-8', html, {
    brotliQuality: html.byteLength > 1024 * 1024 ? 5 : 11,
  });
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (assets.serve(req, res, path)) return;
    if (path === '/') {
      page.send(req, res, { 'cache-control': 'no-cache', 'content-security-policy': REFERENCE_PAGE_CSP });
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  await Promise.all([assets.compressed(), page.compress()]);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, close: () => server.close() };
}

/** Milliseconds from navigation start to the reference's `kennel-reference-ready` mark. */
export async function timeToInteractive(page: Page, url: string): Promise<number> {
  await page.goto(url, { waitUntil: 'load', timeout: 120_000 });
  await page.locator('html[data-reference-ready="true"]').waitFor({ timeout: 120_000 });
  return page.evaluate<number>("performance.getEntriesByName('kennel-reference-ready')[0].startTime");
}

export interface LargeLoad {
  interactiveMs: number;
  /** The sidebar search's own measure (`kennel-search`: filter and status), per query. */
  searchMs: number[];
}

/** Queries typed into the search box, one after the other, as a caller narrows down. */
export const SEARCH_QUERIES = [
  'repos',
  'workflow',
  'workflow runs',
  'actions/list-workflow-runs-for-repo',
  '',
];

/** One cold load of the large document's reference, then the queries. */
export async function measureLargeLoad(page: Page, url: string): Promise<LargeLoad> {
  const interactiveMs = await timeToInteractive(page, url);
  const searchMs: number[] = [];
  for (const query of SEARCH_QUERIES) {
    await page.evaluate('performance.clearMeasures("kennel-search")');
    await page.locator('#kennel-search').fill(query);
    searchMs.push(await page.evaluate<number>("performance.getEntriesByName('kennel-search')[0].duration"));
  }
  return { interactiveMs, searchMs };
}
