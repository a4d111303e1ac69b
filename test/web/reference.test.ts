import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { screenshotPath, type TestBrowser } from '../support/chromium.ts';
import { listenOnLoopback, requestAs } from '../support/http.ts';
import { startPetstore, type TestPetstore } from '../support/petstore.ts';
import { seedPetstoreProject, seedProject } from '../support/platform.ts';
import { openReference as openSite, type SiteBrowser, startSiteBrowser } from '../support/web-sites.ts';

const textOf = async (locator: Locator) => (await locator.textContent()) ?? '';

/** A document that declares bearer auth, to check the console sends the key it is given. */
const SECURED_DOCUMENT = {
  openapi: '3.0.3',
  info: { title: 'Secured', version: '1' },
  paths: {
    '/whoami': {
      get: {
        operationId: 'whoami',
        tags: ['Identity'],
        summary: 'Echo the request',
        security: [{ bearerAuth: [] }],
        responses: { 200: { description: 'What the origin received' } },
      },
    },
  },
  components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
};

// The browser test runs on SQLite only: what it checks is the page and the edge, and the storage
// behind them runs on both databases in test/edge and test/platform.
describe('the published API reference in Chromium', () => {
  let petstore: TestPetstore;
  let sites: SiteBrowser;
  let echo: Server;
  let port: number;
  let chromium: TestBrowser;
  let context: BrowserContext;
  const requested: string[] = [];

  const openReference = (page: Page, slug: string) => openSite(page, `${sites.site(slug)}/`);

  async function expand(page: Page, id: string): Promise<void> {
    const control = page.locator(`#${id} .opblock-summary-control`);
    if ((await control.getAttribute('aria-expanded')) !== 'true') await control.click();
    await page.locator(`#${id} .opblock-body`).waitFor();
  }

  async function execute(page: Page, id: string): Promise<void> {
    await page.locator(`#${id}`).getByRole('button', { name: 'Test it', exact: true }).click();
    await page.locator(`#${id} .execute`).click();
    await page.locator(`#${id} .live-responses-table .response-col_status`).first().waitFor();
  }

  before(async () => {
    petstore = await startPetstore('sqlite');
    const petstoreUrl = await petstore.listen();
    echo = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ url: req.url, authorization: req.headers.authorization ?? null }));
    });
    const echoPort = await listenOnLoopback(echo);
    sites = await startSiteBrowser(async (p) => {
      const { owner, team } = await seedPetstoreProject(p.ctx, petstoreUrl);
      await seedProject(p.ctx, owner, {
        teamId: team.id,
        slug: 'secured',
        name: 'Secured',
        originUrl: `http://127.0.0.1:${echoPort}`,
        document: JSON.stringify(SECURED_DOCUMENT),
      });
    });
    ({ port, chromium } = sites);

    // Two pets, created through the edge like any client would.
    const call = (path: string, body: unknown) =>
      requestAs(port, 'petstore.localhost', path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${petstore.adminKey}` },
        body: JSON.stringify(body),
      });
    assert.equal((await call('/api/categories', { name: 'Dogs' })).status, 201);
    assert.equal((await call('/api/pets', { name: 'Rex', categoryId: 1 })).status, 201);
    assert.equal((await call('/api/pets', { name: 'Fido', categoryId: 1 })).status, 201);

    context = await chromium.newContext();
    context.on('request', (request) => {
      requested.push(request.url());
    });
    sites.watchConsole(context);
  });

  after(async () => {
    await sites?.close();
    echo?.close();
    await petstore?.close();
  });

  it('shows both tags, and "Test it" on GET /pets answers live through the edge', async () => {
    const page = await context.newPage();
    await openReference(page, 'petstore');
    assert.equal(await page.title(), 'Petstore API — API reference');
    assert.equal(await textOf(page.locator('#operations-tag-Pets a')), 'Pets');
    assert.equal(await textOf(page.locator('#operations-tag-Store a')), 'Store');
    assert.ok(await page.locator('#operations-tag-Pets').isVisible());
    assert.ok(await page.locator('#operations-tag-Store').isVisible());

    await expand(page, 'operations-Pets-listPets');
    await execute(page, 'operations-Pets-listPets');
    const response = page.locator('#operations-Pets-listPets .live-responses-table');
    assert.equal((await textOf(response.locator('tbody .response-col_status').first())).trim(), '200');
    const body = await textOf(response.locator('.response-col_description pre').first());
    assert.deepEqual(
      (JSON.parse(body) as { name: string }[]).map((pet) => pet.name),
      ['Rex', 'Fido'],
    );
    assert.match(
      await textOf(page.locator('#operations-Pets-listPets .request-url pre')),
      new RegExp(`^${sites.site('petstore').replace(/\./g, '\\.')}/api/pets`),
    );
    await page.screenshot({ path: screenshotPath('reference'), fullPage: true });
    await page.close();
  });

  it('has no console on GET /store/orders (x-hideTryItPanel)', async () => {
    const page = await context.newPage();
    await openReference(page, 'petstore');
    await expand(page, 'operations-Store-listOrders');
    assert.ok(await page.locator('#operations-Store-listOrders .opblock-description-wrapper').isVisible());
    assert.equal(await page.locator('#operations-Store-listOrders .try-out__btn').count(), 0);
    assert.equal(await page.locator('#operations-Store-listOrders .execute').count(), 0);
    // Other operations keep theirs.
    await expand(page, 'operations-Store-placeOrder');
    assert.equal(await page.locator('#operations-Store-placeOrder .try-out__btn').count(), 1);
    await page.close();
  });

  it('marks GET /pets/{petId} deprecated with its sunset date, and the console points out Deprecation and Sunset', async () => {
    const page = await context.newPage();
    await openReference(page, 'petstore');
    const operation = page.locator('#operations-Pets-getPet');
    assert.match(String(await operation.getAttribute('class')), /\bopblock-deprecated\b/);
    assert.equal(await textOf(operation.locator('.kennel-deprecated')), 'Deprecated · sunset 2027-06-30');
    await expand(page, 'operations-Pets-getPet');
    await operation.locator('.try-out__btn').click();
    await operation.locator('tr[data-param-name="petId"] input').fill('1');
    await operation.locator('.execute').click();
    const note = operation.locator('.kennel-sunset-note');
    await note.waitFor();
    const text = await textOf(note);
    assert.match(text, /deprecated/);
    assert.match(text, /deprecation: @\d+/i);
    assert.match(text, /sunset: Wed, 30 Jun 2027 00:00:00 GMT/i);
    // Swagger UI's own list of the response headers (it splits values at commas).
    const headers = await textOf(operation.locator('.live-responses-table tbody .response-col_description'));
    assert.match(headers, /sunset: Wed, ?30 Jun 2027 00:00:00 GMT/i);
    await note.scrollIntoViewIfNeeded();
    await page.screenshot({ path: screenshotPath('reference-deprecated'), fullPage: false });
    await page.close();
  });

  it('sends the API key given in Authorize for operations that need one', async () => {
    const page = await context.newPage();
    await openReference(page, 'secured');
    await page.locator('.auth-wrapper .authorize').click();
    await page.locator('.auth-container input').fill('s3cret-key');
    await page.locator('.auth-btn-wrapper .modal-btn.authorize').click();
    await page.locator('.auth-btn-wrapper .btn-done').click();
    await expand(page, 'operations-Identity-whoami');
    await execute(page, 'operations-Identity-whoami');
    const body = await textOf(
      page.locator('#operations-Identity-whoami .live-responses-table .response-col_description pre').first(),
    );
    assert.deepEqual(JSON.parse(body), { url: '/whoami', authorization: 'Bearer s3cret-key' });
    await page.close();
  });

  it('works from the keyboard and fits a phone', async () => {
    const phone = await chromium.newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
    });
    phone.on('request', (request) => {
      requested.push(request.url());
    });
    const page = await phone.newPage();
    await openReference(page, 'petstore');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate<string>('document.activeElement.textContent'), 'Skip to the reference');
    const control = page.locator('#operations-Pets-listPets .opblock-summary-control');
    await control.focus();
    await page.keyboard.press('Enter');
    assert.equal(await control.getAttribute('aria-expanded'), 'true');
    const width = await page.evaluate<number>('document.documentElement.scrollWidth');
    await page.screenshot({ path: screenshotPath('reference-phone'), fullPage: false });
    assert.ok(width <= 390, `the page is ${width} px wide on a 390 px screen`);
    await phone.close();
  });

  it('loaded nothing from any other host, and raised no error in the page', () => {
    assert.ok(requested.length > 10, 'requests were recorded');
    const elsewhere = requested.filter((url) => {
      const { hostname, protocol } = new URL(url);
      return !(protocol === 'data:' || hostname === 'petstore.localhost' || hostname === 'secured.localhost');
    });
    assert.deepEqual(elsewhere, []);
    assert.deepEqual(sites.consoleErrors, []);
  });
});
