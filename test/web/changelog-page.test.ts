import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { createToken } from '../../src/platform/accounts/credentials.ts';
import { accessibilityViolations } from '../support/axe.ts';
import { V1, V2, V3 } from '../support/changelog-documents.ts';
import { screenshotPath } from '../support/chromium.ts';
import { overflow } from '../support/dashboard-page.ts';
import { requestAs } from '../support/http.ts';
import { seedTeamProject } from '../support/platform-config.ts';
import { type SiteBrowser, startSiteBrowser } from '../support/web-sites.ts';

// SQLite only, like the reference's browser test: what this checks is the page in a browser; the
// changelog's storage runs on both databases in test/edge/changelog.test.ts.
describe("a site's changelog page in Chromium", () => {
  let sites: SiteBrowser;
  let context: BrowserContext;
  const failed: string[] = [];

  const site = () => sites.site('pets');

  async function open(page: Page, path: string) {
    sites.watchConsole(page);
    page.on('requestfailed', (request) => failed.push(request.url()));
    page.on('response', (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
    });
    await page.goto(`${site()}${path}`);
  }

  before(async () => {
    const started = await startSiteBrowser(
      async (p) =>
        (
          await seedTeamProject(p.ctx, {
            slug: 'pets',
            name: 'Pets',
            originUrl: 'http://127.0.0.1:9/',
            document: false,
          })
        ).owner,
    );
    sites = started;
    const { p, edge, seeded: owner } = started;
    const token = (await createToken(p.ctx, owner, 'tests')).token;
    for (const [document, extra] of [
      [V1, {}],
      [V2, {}],
      [V3, { allowBreaking: true }],
    ] as const) {
      p.clock.advance(3_600_000);
      const answer = await requestAs(edge.port, 'localhost', '/api/v1/projects/pets/deploys', {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ document: JSON.stringify(document), ...extra }),
      });
      assert.equal(answer.status, 201, answer.text);
    }
    context = await sites.chromium.newContext();
  });

  after(() => sites?.close());

  it('reads well at 1280 and 390 px, passes axe, and loads nothing that fails', async () => {
    for (const width of [1280, 390]) {
      const page = await context.newPage();
      await page.setViewportSize({ width, height: 900 });
      await open(page, '/changelog');
      await page.getByRole('heading', { level: 1, name: 'Changelog' }).waitFor();
      assert.equal(await page.locator('article.kennel-entry').count(), 3);
      assert.equal(await page.locator('article.kennel-entry-breaking').count(), 1);
      assert.deepEqual(await accessibilityViolations(page), []);
      assert.ok((await overflow(page)) <= 0, `no sideways scroll at ${width} px`);
      await page.screenshot({ path: screenshotPath(`changelog-${width}`), fullPage: true });
      await page.close();
    }
    assert.deepEqual(sites.consoleErrors, []);
    assert.deepEqual(failed, []);
  });

  it('links an operation to the reference, which opens at it (Swagger UI deep linking)', async () => {
    const page = await context.newPage();
    await open(page, '/changelog');
    await page.getByRole('link', { name: 'GET /pets/{petId}/toys' }).click();
    await page.waitForURL(`${site()}/#/pets/listToys`);
    await page.locator('html[data-reference-ready="true"]').waitFor();
    const opened = page.locator('.opblock.is-open');
    await opened.first().waitFor();
    assert.equal(await opened.count(), 1);
    assert.match(
      (await opened.locator('.opblock-summary-path').textContent()) ?? '',
      /^\/api\/pets\/\{petId\}\/toys$|^\/pets\/\{petId\}\/toys$/,
    );

    // An operation without operationId or tag: Swagger UI's own name for it, under `default`.
    await page.goto(`${site()}/changelog`);
    await page.getByRole('link', { name: 'GET /search/<script>alert(1)</script>' }).click();
    await page.locator('html[data-reference-ready="true"]').waitFor();
    await page.locator('.opblock.is-open').first().waitFor();
    assert.match(
      (await page.locator('.opblock.is-open .opblock-summary-path').textContent()) ?? '',
      /\/search\/<script>alert\(1\)<\/script>$/,
    );
    await page.close();
  });

  it('the reference links the changelog and its feed', async () => {
    const page = await context.newPage();
    await open(page, '/');
    assert.equal(
      await page.locator('link[rel="alternate"][type="application/atom+xml"]').getAttribute('href'),
      '/changelog.atom',
    );
    await page.getByRole('link', { name: 'Changelog' }).click();
    await page.getByRole('heading', { level: 1, name: 'Changelog' }).waitFor();
    await page.close();
  });
});
