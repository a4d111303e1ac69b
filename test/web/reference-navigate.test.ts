import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { githubDocument, serveReference } from '../../bench/reference-large.ts';
import { accessibilityViolations } from '../support/axe.ts';
import { launchChromium, screenshotPath, type TestBrowser } from '../support/chromium.ts';
import { startPetstore, type TestPetstore } from '../support/petstore.ts';
import { seedPetstoreProject } from '../support/platform.ts';
import { openReference, type SiteBrowser, startSiteBrowser } from '../support/web-sites.ts';

/** The sidebar's entries as shown: "METHOD path" of each visible operation, in order. */
async function visibleEntries(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(`[...document.querySelectorAll('.kennel-operations li:not([hidden]) a')]
    .filter((a) => !a.closest('[hidden]'))
    .map((a) => a.querySelector('.kennel-method').textContent + ' ' + a.querySelector('.kennel-path').textContent)`);
}

// The browser test runs on SQLite only: what it checks is the page; the storage behind it runs on
// both databases in test/edge and test/platform.
describe('navigating the published reference in Chromium', () => {
  let petstore: TestPetstore;
  let sites: SiteBrowser;
  let chromium: TestBrowser;
  let consoleErrors: string[] = [];
  const site = () => sites.site('petstore');

  before(async () => {
    petstore = await startPetstore('sqlite');
    const origin = await petstore.listen();
    sites = await startSiteBrowser((p) => seedPetstoreProject(p.ctx, origin));
    ({ chromium, consoleErrors } = sites);
  });

  after(async () => {
    await sites?.close();
    await petstore?.close();
  });

  async function open(page: Page, url = `${site()}/`): Promise<void> {
    sites.watchConsole(page);
    await openReference(page, url);
  }

  it('lists the operations by tag in a sidebar, the first operation in the first screen at 1280×800, axe clean', async () => {
    const context = await chromium.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await open(page);
    const tags = await page.locator('nav[aria-label="Operations"] .kennel-tag h2').allTextContents();
    assert.deepEqual(tags, ['Pets', 'Store', 'Admin']);
    const entries = await visibleEntries(page);
    assert.equal(entries.length, 27);
    assert.deepEqual(entries.slice(0, 3), ['GET /pets', 'POST /pets', 'GET /pets/{petId}']);
    assert.equal(
      await page.locator('.kennel-operations a[href="#/Pets/getPet"] .kennel-deprecated').textContent(),
      'deprecated — sunset 2027-06-30',
    );
    // The first operation of the list, whole, without scrolling.
    const first = await page.locator('.opblock').first().boundingBox();
    assert.ok(
      first && first.y >= 0 && first.y + first.height <= 800,
      `the first operation is at ${first?.y} px`,
    );
    await page.screenshot({ path: screenshotPath('reference-sidebar-1280') });
    // The whole page, every operation of the list shown, the description unfolded.
    assert.equal(await page.locator('.opblock').count(), 27);
    await page.locator('.kennel-about summary').click();
    assert.deepEqual(await accessibilityViolations(page), []);
    // An operation open, with its console.
    await page.locator('#operations-Pets-listPets .opblock-summary-control').click();
    await page
      .locator('#operations-Pets-listPets')
      .getByRole('button', { name: 'Test it', exact: true })
      .click();
    assert.deepEqual(await accessibilityViolations(page), []);
    await context.close();
  });

  it('searches paths, summaries and descriptions, every word', async () => {
    const context = await chromium.newContext();
    const page = await context.newPage();
    await open(page);
    const search = page.getByRole('searchbox', { name: 'Search operations' });
    // A path: its operations, and those whose description names it (POST and PUT /pets do).
    await search.fill('/store/inventory');
    assert.deepEqual(await visibleEntries(page), [
      'POST /pets',
      'PUT /pets/{petId}',
      'GET /store/inventory',
      'GET /store/inventory/{petId}',
      'PUT /store/inventory/{petId}',
    ]);
    assert.equal(await page.locator('#kennel-search-status').textContent(), '5 operations match');
    await search.fill('revokes a key');
    assert.deepEqual(await visibleEntries(page), ['DELETE /keys/{keyId}']);
    // Words only in a description: listInventory's says "stock of every pet".
    const description = 'stock of every pet';
    await search.fill(description);
    assert.deepEqual(await visibleEntries(page), ['GET /store/inventory']);
    assert.deepEqual(await page.locator('.kennel-tag:not([hidden]) h2').allTextContents(), ['Store']);
    await search.fill('nothing-like-this');
    assert.deepEqual(await visibleEntries(page), []);
    assert.equal(await page.locator('#kennel-search-status').textContent(), '0 operations match');
    await search.fill('');
    assert.equal((await visibleEntries(page)).length, 27);
    await context.close();
  });

  it('opens an operation from its deep link, from the sidebar and from the address', async () => {
    const context = await chromium.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await open(page);
    await page.locator('.kennel-operations a[href="#/Admin/revokeApiKey"]').click();
    await page.locator('#operations-Admin-revokeApiKey .opblock-body').waitFor();
    assert.equal(new URL(page.url()).hash, '#/Admin/revokeApiKey');
    const box = await page.locator('#operations-Admin-revokeApiKey').boundingBox();
    assert.ok(box && box.y >= 0 && box.y < 800, `the operation is at ${box?.y} px`);
    assert.equal(
      await page.locator('.kennel-operations a[aria-current="location"]').getAttribute('href'),
      '#/Admin/revokeApiKey',
    );

    const other = await context.newPage();
    await open(other, `${site()}/#/Store/listOrders`);
    await other.locator('#operations-Store-listOrders .opblock-body').waitFor();
    // The seed's rule holds when opened this way too: no console on GET /store/orders.
    assert.equal(await other.locator('#operations-Store-listOrders .try-out').count(), 0);
    await context.close();
  });

  it('keeps the key given in Authorize across a reload only when "Remember my key on this device" is ticked', async () => {
    const context = await chromium.newContext();
    const page = await context.newPage();
    const authorizeWith = async (key: string) => {
      await page.locator('header .kennel-authorize').click();
      await page.locator('.dialog-ux .auth-container input').fill(key);
      await page.locator('.dialog-ux .auth-btn-wrapper .modal-btn.authorize').click();
      await page.locator('.dialog-ux .auth-btn-wrapper .btn-done').click();
    };
    await open(page);
    const remember = page.getByRole('checkbox', { name: 'Remember my key on this device' });
    assert.equal(await remember.isChecked(), false);
    await authorizeWith('not-kept');
    assert.equal(await page.locator('header .kennel-authorize').textContent(), 'Authorized');
    await page.reload();
    await page.locator('html[data-reference-ready="true"]').waitFor();
    assert.equal(await page.locator('header .kennel-authorize').textContent(), 'Authorize');
    assert.equal(await page.evaluate<number>('localStorage.length'), 0);

    await remember.check();
    await authorizeWith(petstore.adminKey);
    await page.reload();
    await page.locator('html[data-reference-ready="true"]').waitFor();
    assert.equal(await page.locator('header .kennel-authorize').textContent(), 'Authorized');
    assert.equal(await remember.isChecked(), true);
    // The kept key is sent: POST /categories needs it.
    await page.locator('#operations-Pets-createCategory .opblock-summary-control').click();
    await page
      .locator('#operations-Pets-createCategory')
      .getByRole('button', { name: 'Test it', exact: true })
      .click();
    await page.locator('#operations-Pets-createCategory .execute').click();
    const status = page
      .locator('#operations-Pets-createCategory .live-responses-table tbody .response-col_status')
      .first();
    await status.waitFor();
    assert.equal((await status.textContent())?.trim(), '201');

    // Unticking forgets it.
    await remember.uncheck();
    assert.equal(await page.evaluate<number>('localStorage.length'), 0);
    await page.reload();
    await page.locator('html[data-reference-ready="true"]').waitFor();
    assert.equal(await page.locator('header .kennel-authorize').textContent(), 'Authorize');
    await context.close();
  });

  it('raised no error in the page', () => {
    assert.deepEqual(consoleErrors, []);
  });
});

describe("the reference of GitHub's REST description (about 1,100 operations) in Chromium", () => {
  it('lists every operation, finds one by words of its summary and opens it from its deep link', async () => {
    const document = githubDocument();
    let operations = 0;
    for (const item of Object.values(document.paths as Record<string, Record<string, unknown>>))
      operations += Object.keys(item).filter((key) =>
        ['get', 'put', 'post', 'delete', 'patch'].includes(key),
      ).length;
    const served = await serveReference(document);
    const chromium = await launchChromium();
    try {
      const context = await chromium.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      await page.goto(served.url, { timeout: 120_000 });
      await page.locator('html[data-reference-ready="true"]').waitFor({ timeout: 120_000 });
      assert.equal(await page.locator('.kennel-operations a').count(), operations);
      await page
        .getByRole('searchbox', { name: 'Search operations' })
        .fill('actions/list-workflow-runs-for-repo');
      assert.deepEqual(await visibleEntries(page), ['GET /repos/{owner}/{repo}/actions/runs']);
      const link = page.locator('.kennel-operations li:not([hidden]) a');
      assert.equal(await link.getAttribute('href'), '#/actions/actions_list_workflow_runs_for_repo');
      await link.click();
      const target = page.locator('[id="operations-actions-actions\\\\/list-workflow-runs-for-repo"]');
      await target.locator('.opblock-body').waitFor({ timeout: 30_000 });
      const box = await target.boundingBox();
      assert.ok(box && box.y >= 0 && box.y < 800, `the operation is at ${box?.y} px`);
      await context.close();
    } finally {
      await chromium.close();
      served.close();
    }
  });
});
