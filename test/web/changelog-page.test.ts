import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { createToken } from '../../src/platform/accounts/credentials.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import { accessibilityViolations } from '../support/axe.ts';
import { V1, V2, V3 } from '../support/changelog-documents.ts';
import { launchChromium, screenshotPath, type TestBrowser } from '../support/chromium.ts';
import { closeAll } from '../support/cleanup.ts';
import { overflow } from '../support/dashboard-page.ts';
import { type PlainEdge, startPlainEdge } from '../support/edge.ts';
import { requestAs } from '../support/http.ts';
import { seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';

// SQLite only, like the reference's browser test: what this checks is the page in a browser; the
// changelog's storage runs on both databases in test/edge/changelog.test.ts.
describe("a site's changelog page in Chromium", () => {
  let p: TestPlatform;
  let edge: PlainEdge;
  let chromium: TestBrowser;
  let context: BrowserContext;
  const consoleErrors: string[] = [];
  const failed: string[] = [];

  const site = () => `http://pets.localhost:${edge.port}`;

  async function open(page: Page, path: string) {
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    page.on('requestfailed', (request) => failed.push(request.url()));
    page.on('response', (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
    });
    await page.goto(`${site()}${path}`);
  }

  before(async () => {
    p = await startPlatformContext('sqlite', { PLATFORM_DOMAIN: 'localhost' });
    const { owner, team } = await seedTeam(p.ctx);
    await createProject(p.ctx, owner, {
      teamId: team.id,
      slug: 'pets',
      name: 'Pets',
      originUrl: 'http://127.0.0.1:9/',
    });
    edge = await startPlainEdge(p);
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
    chromium = await launchChromium();
    context = await chromium.newContext();
  });

  after(() => closeAll(chromium, edge, p));

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
    assert.deepEqual(consoleErrors, []);
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
