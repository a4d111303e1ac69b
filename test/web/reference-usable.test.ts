import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { petstoreDocument } from '../../src/petstore/index.ts';
import type { Dialect } from '../../src/storage/index.ts';
import { referenceAssets, renderReferencePage } from '../../src/web/reference/index.ts';
import { accessibilityViolations } from '../support/axe.ts';
import { launchChromium, screenshotPath, type TestBrowser } from '../support/chromium.ts';
import { createTestStorage, testDialects } from '../support/databases.ts';
import { type PlainEdge, startPlainEdge } from '../support/edge.ts';
import { exampleRequest, operationIds } from '../support/example-requests.ts';
import { requestAs } from '../support/http.ts';
import { startPetstore, TEST_DEPRECATION, type TestPetstore } from '../support/petstore.ts';
import { seedPetstoreProject, startPlatformContext, type TestPlatform } from '../support/platform.ts';
import { startProcess, storageEnv } from '../support/processes.ts';

/** The Petstore's admin key, given to the first start instead of one it would print. */
const ADMIN_KEY = `pk_${'R'.repeat(43)}`;

interface FreshPetstore {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * The Petstore as a first start makes it (src/main/petstore.ts on an empty database, the same app
 * and first admin key `npm start` runs as the `petstore` project's origin): nothing in it but that
 * key. GET /pets/{petId}'s sunset is moved out of the way so the walk does not start answering
 * 410 on 2027-06-30.
 */
async function startFreshPetstore(dialect: Dialect): Promise<FreshPetstore> {
  const storage = await createTestStorage(dialect);
  const dataDir =
    storage.location.kind === 'sqlite'
      ? join(storage.location.file, '..')
      : mkdtempSync(join(tmpdir(), 'kennel-reference-'));
  const server = await startProcess('petstore.ts', {
    ...storageEnv(storage.location),
    DATA_DIR: dataDir,
    PETSTORE_ADMIN_KEY: ADMIN_KEY,
    PETSTORE_GET_PET_SUNSET: '2099-12-31',
  });
  return {
    port: Number(new URL(server.url).port),
    async close() {
      await server.stop();
      await storage.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The orders in which a reader goes through the examples, each from a fresh start: create before
 * read, read before change, deletes last. A completed order keeps its pet and category from being
 * deleted, and order 1 cannot be both completed and cancelled, hence two walks.
 */
const WALKS: Record<string, string[]> = {
  'shop: category, pet, stock, an order completed, keys, webhooks': [
    'createCategory',
    'listCategories',
    'getCategory',
    'updateCategory',
    'createPet',
    'listPets',
    'getPet',
    'updatePet',
    'setStock',
    'listInventory',
    'getInventory',
    'placeOrder',
    'listOrders',
    'getOrder',
    'completeOrder',
    'createApiKey',
    'listApiKeys',
    'revokeApiKey',
    'createWebhookSubscription',
    'listWebhookSubscriptions',
    'getWebhookSubscription',
    'listWebhookDeliveries',
    'deleteWebhookSubscription',
  ],
  'an order cancelled, then the pet and its category deleted': [
    'createCategory',
    'createPet',
    'placeOrder',
    'cancelOrder',
    'deletePet',
    'deleteCategory',
  ],
};

/** Operations no example can run on a fresh Petstore, and why. */
const NOT_FROM_EXAMPLES: Record<string, string> = {
  redeliverWebhookMessage: 'its messageId exists only once a delivery log names one',
};

describe("the Petstore's request examples", () => {
  it('cover every operation: each is in a walk, or is listed with the reason it cannot be', () => {
    const document = petstoreDocument(TEST_DEPRECATION) as Parameters<typeof operationIds>[0];
    const walked = new Set(Object.values(WALKS).flat());
    const all = operationIds(document);
    assert.deepEqual(
      all.filter((id) => !walked.has(id)),
      Object.keys(NOT_FROM_EXAMPLES),
      'an operation is in no walk: put it where a fresh Petstore has what it needs',
    );
    for (const id of Object.keys(NOT_FROM_EXAMPLES)) assert.ok(all.includes(id), `${id} exists`);
    for (const id of walked) assert.deepEqual(exampleRequest(document, id).missing, [], id);
  });
});

for (const dialect of testDialects()) {
  describe(`the Petstore's request examples on a fresh start (${dialect})`, () => {
    for (const [name, walk] of Object.entries(WALKS)) {
      it(`${name}: every example as "Test it" sends it answers 2xx`, async () => {
        const petstore = await startFreshPetstore(dialect);
        const send = (path: string, init: Parameters<typeof requestAs>[3] = {}) =>
          requestAs(petstore.port, '127.0.0.1', path, init);
        try {
          const published = await send('/openapi.json');
          assert.equal(published.status, 200);
          const document = JSON.parse(published.text);
          for (const operationId of walk) {
            const request = exampleRequest(document, operationId);
            assert.deepEqual(
              request.missing,
              [],
              `${operationId} has an example for every required parameter`,
            );
            const reply = await send(request.path, {
              method: request.method,
              headers: {
                ...request.headers,
                ...(request.needsKey ? { authorization: `Bearer ${ADMIN_KEY}` } : {}),
                ...(request.body !== undefined ? { 'content-type': 'application/json' } : {}),
              },
              ...(request.body !== undefined ? { body: JSON.stringify(request.body) } : {}),
            });
            assert.ok(
              reply.status >= 200 && reply.status < 300,
              `${operationId}: ${request.method} ${request.path} ${JSON.stringify(request.body) ?? ''} answered ${reply.status} ${reply.text}`,
            );
          }
        } finally {
          await petstore.close();
        }
      });
    }
  });
}

describe('the reference page', () => {
  it('has an Authorize button in its header only when the document declares a security scheme', () => {
    const withSchemes = renderReferencePage(petstoreDocument(TEST_DEPRECATION), referenceAssets());
    assert.match(
      withSchemes,
      /<div class="kennel-auth" hidden><button type="button" class="kennel-authorize">Authorize<\/button> <label class="kennel-remember"><input type="checkbox" id="kennel-remember"> Remember my key on this device<\/label><\/div>/,
    );
    const open = { openapi: '3.0.3', info: { title: 'Open', version: '1' }, paths: {} };
    assert.doesNotMatch(renderReferencePage(open, referenceAssets()), /kennel-authorize/);
    const empty = { ...open, components: { securitySchemes: {} } };
    assert.doesNotMatch(renderReferencePage(empty, referenceAssets()), /kennel-authorize/);
  });
});

/** What Kennel adds to Swagger UI: the header with its Authorize button, the description with its tables. */
const KENNEL_PARTS = ['header', '.swagger-ui .info'];

const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };

/**
 * The published reference of a fresh Petstore: a Petstore on an empty database (its first admin
 * key only), deployed as `petstore` and served by the edge at petstore.localhost, as the first
 * start publishes it. In the browser the storage behind the page does not matter (the walks above
 * run on both databases).
 */
describe('the reference of a fresh Petstore in Chromium', () => {
  let p: TestPlatform;
  let petstore: TestPetstore;
  let edge: PlainEdge;
  let port: number;
  let chromium: TestBrowser;
  const consoleErrors: string[] = [];

  before(async () => {
    p = await startPlatformContext('sqlite', { PLATFORM_DOMAIN: 'localhost' });
    petstore = await startPetstore('sqlite');
    await seedPetstoreProject(p.ctx, await petstore.listen());
    edge = await startPlainEdge(p);
    port = edge.port;
    chromium = await launchChromium({ mapToLoopback: ['*.localhost'] });
  });

  after(async () => {
    await chromium?.close();
    await edge?.close();
    await petstore?.close();
    await p?.close();
  });

  async function open(context: BrowserContext): Promise<Page> {
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    await page.goto(`http://petstore.localhost:${port}/`);
    await page.locator('html[data-reference-ready="true"]').waitFor();
    return page;
  }

  for (const [label, options, height] of [
    ['1280 px', {}, 900],
    ['390 px', PHONE, 844],
  ] as const) {
    it(`shows Authorize in the first screen at ${label}, and it opens Swagger UI's authorization dialog`, async () => {
      const context = await chromium.newContext(options);
      try {
        const page = await open(context);
        const authorize = page.locator('header .kennel-authorize');
        assert.equal(await authorize.textContent(), 'Authorize');
        const box = await authorize.boundingBox();
        assert.ok(box, 'the header shows Authorize');
        assert.ok(box.y >= 0 && box.y + box.height <= height, `Authorize is at ${box.y} px`);
        assert.deepEqual(await accessibilityViolations(page, KENNEL_PARTS), []);
        if (label === '1280 px') await page.screenshot({ path: screenshotPath('reference-1280') });

        await authorize.click();
        const dialog = page.locator('.dialog-ux .modal-ux');
        await dialog.waitFor();
        assert.equal((await dialog.locator('h3').textContent())?.trim(), 'Available authorizations');
        assert.ok(await dialog.locator('input').first().isVisible());
        // The dialog is in view wherever the page is (Swagger UI's own button is screens below).
        const inner = await dialog.locator('.modal-ux-inner').boundingBox();
        assert.ok(inner && inner.y >= 0 && inner.y < height, `the dialog is at ${inner?.y} px`);
        assert.equal(
          await page.evaluate<boolean>("Boolean(document.activeElement?.closest('.dialog-ux'))"),
          true,
          'focus moved into the dialog',
        );
        // Escape closes it and gives focus back to the button that opened it.
        await page.keyboard.press('Escape');
        await dialog.waitFor({ state: 'detached' });
        assert.equal(await authorize.evaluate((el) => el.ownerDocument.activeElement === el), true);
      } finally {
        await context.close();
      }
    });
  }

  it('"Test it" with the examples as they come: POST /categories, then POST /pets, answer 201', async () => {
    const context = await chromium.newContext();
    try {
      const page = await open(context);
      await page.locator('header .kennel-authorize').click();
      await page.locator('.dialog-ux .auth-container input').fill(petstore.adminKey);
      await page.locator('.dialog-ux .auth-btn-wrapper .modal-btn.authorize').click();
      await page.locator('.dialog-ux .auth-btn-wrapper .btn-done').click();
      assert.equal(await page.locator('header .kennel-authorize').textContent(), 'Authorized');

      for (const [id, expected] of [
        ['operations-Pets-createCategory', { id: 1, name: 'Dogs', description: 'Loyal companions' }],
        ['operations-Pets-createPet', { id: 1, name: 'Rex', categoryId: 1, status: 'available' }],
      ] as const) {
        await page.locator(`#${id} .opblock-summary-control`).click();
        await page.locator(`#${id}`).getByRole('button', { name: 'Test it', exact: true }).click();
        await page.locator(`#${id} .execute`).click();
        const response = page.locator(`#${id} .live-responses-table`);
        await response.locator('.response-col_status').first().waitFor();
        assert.equal(
          (await response.locator('tbody .response-col_status').first().textContent())?.trim(),
          '201',
        );
        const body = await response.locator('.response-col_description pre').first().textContent();
        assert.deepEqual(JSON.parse(body ?? ''), expected);
      }
    } finally {
      await context.close();
    }
  });

  it('scrolls the description tables inside their own box on a 390 px phone, not the page', async () => {
    const context = await chromium.newContext(PHONE);
    try {
      const page = await open(context);
      const boxes = page.locator('.swagger-ui .info .kennel-table-scroll');
      assert.equal(await boxes.count(), 2, 'both description tables are boxed');
      assert.equal(await page.evaluate<number>('document.documentElement.scrollWidth'), 390);
      const tables =
        await page.evaluate(`[...document.querySelectorAll('.swagger-ui .info .kennel-table-scroll')]
        .map((box) => ({
          role: box.getAttribute('role'),
          label: box.getAttribute('aria-label'),
          tabIndex: box.tabIndex,
          overflowX: getComputedStyle(box).overflowX,
          scrolls: box.scrollWidth > box.clientWidth,
          clippedCells: [...box.querySelectorAll('th, td')]
            .filter((cell) => cell.scrollWidth > cell.clientWidth + 1)
            .map((cell) => cell.textContent),
        }))`);
      assert.deepEqual(tables, [
        {
          role: 'region',
          label: 'Table 1: condition, status',
          tabIndex: 0,
          overflowX: 'auto',
          scrolls: false,
          clippedCells: [],
        },
        {
          role: 'region',
          label: 'Table 2: order from, event, order to, stock, held by open orders, also',
          tabIndex: 0,
          overflowX: 'auto',
          scrolls: true,
          clippedCells: [],
        },
      ]);
      // The wide one scrolls by itself; the page does not move.
      const wide = boxes.nth(1);
      await wide.scrollIntoViewIfNeeded();
      await wide.evaluate((box) => {
        box.scrollLeft = 200;
      });
      assert.ok((await wide.evaluate((box) => box.scrollLeft)) > 0);
      assert.equal(await page.evaluate<number>('window.scrollX'), 0);
      await wide.evaluate((box) => {
        box.scrollLeft = 0;
      });
      assert.deepEqual(await accessibilityViolations(page, KENNEL_PARTS), []);
      await page.screenshot({ path: screenshotPath('reference-390') });
    } finally {
      await context.close();
    }
  });

  it('raised no error in the page', () => {
    assert.deepEqual(consoleErrors, []);
  });
});
