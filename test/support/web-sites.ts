import type { ConsoleMessage, Page } from 'playwright-core';
import { launchChromium } from './chromium.ts';
import { startPlainEdge } from './edge.ts';
import { startPlatformContext, type TestPlatform } from './platform.ts';

/**
 * Published sites as a reader's browser sees them (test/web/reference*.test.ts, changelog-page):
 * a platform on SQLite whose domain is localhost, seeded by `seed` (its answer kept as `seeded`), the edge in front of it, and
 * Chromium mapping *.localhost to the edge. SQLite only: what these tests check is the page; the
 * storage behind it runs on both databases in test/edge and test/platform.
 */
export async function startSiteBrowser<Seeded>(seed: (p: TestPlatform) => Promise<Seeded>) {
  const p = await startPlatformContext('sqlite', { PLATFORM_DOMAIN: 'localhost' });
  let seeded: Seeded;
  try {
    seeded = await seed(p);
  } catch (error) {
    await p.close();
    throw error;
  }
  const edge = await startPlainEdge(p);
  const chromium = await launchChromium({ mapToLoopback: ['*.localhost'] });
  const consoleErrors: string[] = [];
  return {
    p,
    /** What `seed` returned. */
    seeded,
    edge,
    port: edge.port,
    chromium,
    /** The errors pages logged to their console, once `watchConsole` was called on them. */
    consoleErrors,
    /** The address of project `slug`'s site. */
    site: (slug: string) => `http://${slug}.localhost:${edge.port}`,
    /** Records console errors of a page or of every page of a context into `consoleErrors`. */
    watchConsole(target: { on(event: 'console', listener: (message: ConsoleMessage) => void): unknown }) {
      target.on('console', (message) => {
        if (message.type() === 'error') consoleErrors.push(message.text());
      });
    },
    async close() {
      await chromium.close();
      await edge.close();
      await p.close();
    },
  };
}

export type SiteBrowser = Awaited<ReturnType<typeof startSiteBrowser<unknown>>>;

/** Opens a reference page at `url` and waits until Swagger UI has drawn it. */
export async function openReference(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.locator('html[data-reference-ready="true"]').waitFor();
}
