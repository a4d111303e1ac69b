import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { BrowserContext, Page } from 'playwright-core';
import { buildPlatformApp } from '../../src/main/platform-app.ts';
import { accessibilityViolations } from '../support/axe.ts';
import { V1, V2, V3 } from '../support/changelog-documents.ts';
import { launchChromium, screenshotPath, type TestBrowser } from '../support/chromium.ts';
import { closeAll } from '../support/cleanup.ts';
import { laidOutText, overflow, signIn, WAIT, watchFailures } from '../support/dashboard-page.ts';
import { testDialects } from '../support/databases.ts';
import { startPlatformContext, type TestPlatform } from '../support/platform.ts';
import { seedTeamProject } from '../support/platform-config.ts';

/**
 * Issue 26's deploy history in Chromium: each deploy's number, author and changes; a breaking
 * deploy asks first and lists what breaks; Promote (the same question when going back breaks
 * callers); two deploys compared side by side; a deploy's document viewed and downloaded; a
 * preview marked, with its "Open preview" link. The page is checked with axe at each step, at
 * 1280 and 390 px, and nothing it loads fails.
 */
for (const dialect of testDialects()) {
  describe(`dashboard: deploy history, gate, promote, compare (${dialect})`, () => {
    let p: TestPlatform;
    let app: FastifyInstance;
    let base: string;
    let chromium: TestBrowser;
    let context: BrowserContext;
    let page: Page;
    const problems: string[] = [];

    const rows = () => page.locator('table.deploy-table tbody tr');
    const row = (number: number) => page.locator(`tr[data-number="${number}"]`);
    const outcome = () => page.locator('[data-testid="deploy-outcome"]');
    const liveNumber = async () =>
      Number(
        (
          await p.ctx.db
            .selectFrom('projects')
            .innerJoin('deploys', 'deploys.id', 'projects.active_deploy_id')
            .select('deploys.number')
            .where('projects.slug', '=', 'pets')
            .executeTakeFirstOrThrow()
        ).number,
      );

    async function deployText(document: unknown) {
      await page.getByLabel('OpenAPI document', { exact: true }).fill(JSON.stringify(document, null, 2));
      await page.getByRole('button', { name: 'Deploy', exact: true }).click();
    }

    before(async () => {
      p = await startPlatformContext(dialect);
      await seedTeamProject(p.ctx, {
        slug: 'pets',
        name: 'Pets',
        originUrl: 'https://pets.example.com',
        document: false,
      });
      app = buildPlatformApp(p.ctx);
      await app.listen({ host: '127.0.0.1', port: 0 });
      base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      chromium = await launchChromium();
      context = await chromium.newContext({ acceptDownloads: true });
      page = await context.newPage();
      await signIn(page, base, 'owner@x.test', 'owner password 1');
      // From here on nothing may fail but the deploy gate's own 409 (breaking_changes).
      watchFailures(page, problems, { expected: ['409 POST /api/v1/projects/pets/deploys'] });
      await page.goto(`${base}/projects/pets/deploys`);
      await page.getByRole('heading', { level: 2, name: 'Deploy a document' }).waitFor(WAIT);
    });

    after(() => closeAll(chromium, app, p));

    it('numbers deploys per project, says who made each, and shows each deploy’s changes', async () => {
      await deployText(V1);
      await outcome().filter({ hasText: 'Deploy #1 is live' }).waitFor(WAIT);
      await deployText(V2);
      await outcome().filter({ hasText: 'Deploy #2 is live' }).waitFor(WAIT);
      assert.match(await laidOutText(outcome()), /2 changes against the live deploy/);
      assert.match(await laidOutText(outcome()), /GET \/pets\/\{petId\}\/toys/);
      assert.equal(await rows().count(), 2);
      assert.deepEqual(
        await rows().evaluateAll((trs) =>
          trs.map((tr) => (tr as unknown as { dataset: { number: string } }).dataset.number),
        ),
        ['2', '1'],
      );
      assert.equal(await row(2).getAttribute('data-live'), 'true');
      assert.match(
        await laidOutText(row(2)),
        /^#2 Live Succeeded, serving .*2 changes.* by owner@x\.test JSON, origin https:\/\/pets\.example\.com/,
      );
      assert.match(await laidOutText(row(1)), /No changes .* by owner@x\.test/);
      await row(2).getByText('2 changes').click();
      assert.match(await laidOutText(row(2).locator('.change-list')), /Change GET \/pets\/\{petId\}\/toys/);
      assert.deepEqual(await accessibilityViolations(page), []);
    });

    it('a breaking deploy asks first, listing what breaks; cancelled, nothing changes; confirmed, it goes live', async () => {
      await deployText(V3);
      const dialog = page.getByRole('dialog');
      await dialog.waitFor(WAIT);
      assert.match(await laidOutText(dialog.locator('h2')), /breaks callers/);
      assert.match(await laidOutText(dialog.locator('.change-list')), /^Breaking DELETE \/pets\/\{petId\}/);
      assert.deepEqual(await accessibilityViolations(page), []);
      await page.screenshot({ path: screenshotPath('deploys-breaking-1280') });
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await outcome().filter({ hasText: 'Not deployed: it has breaking changes' }).waitFor(WAIT);
      assert.equal(await liveNumber(), 2, 'nothing was published');

      await page.getByRole('button', { name: 'Deploy', exact: true }).click();
      await dialog.waitFor(WAIT);
      await dialog.getByRole('button', { name: 'Deploy anyway' }).click();
      await outcome()
        .filter({ hasText: /Deploy #\d+ is live/ })
        .waitFor(WAIT);
      const live = await liveNumber();
      assert.match(await laidOutText(outcome()), new RegExp(`Deploy #${live} is live`));
      assert.match(await laidOutText(row(live)), /Breaking 1 change, 1 breaking/);
    });

    it('promotes an earlier deploy, asking with the list of what breaks when going back breaks callers', async () => {
      const breakingNumber = await liveNumber();
      // Back to #2 adds DELETE back: not breaking, a plain confirmation.
      await row(2)
        .getByRole('button', { name: /^Promote/ })
        .click();
      const dialog = page.getByRole('dialog');
      await dialog.getByRole('heading', { name: 'Make deploy #2 live?' }).waitFor(WAIT);
      await dialog.getByRole('button', { name: 'Promote' }).click();
      await outcome().filter({ hasText: 'Deploy #2 is live again' }).waitFor(WAIT);
      assert.equal(await liveNumber(), 2);
      await row(2).and(page.locator('[data-live="true"]')).waitFor(WAIT);

      // Forward to the breaking one again: the breaking dialog, listing the removal.
      await row(breakingNumber)
        .getByRole('button', { name: /^Promote/ })
        .click();
      await dialog.locator('.change-list').waitFor(WAIT);
      assert.match(
        await laidOutText(dialog.locator('h2')),
        new RegExp(`Promote deploy #${breakingNumber}\\? It breaks callers`),
      );
      assert.match(await laidOutText(dialog.locator('.change-list')), /DELETE \/pets\/\{petId\}/);
      assert.deepEqual(await accessibilityViolations(page), []);
      await dialog.getByRole('button', { name: 'Promote anyway' }).click();
      await outcome()
        .filter({ hasText: `Deploy #${breakingNumber} is live again` })
        .waitFor(WAIT);
      assert.equal(await liveNumber(), breakingNumber);
    });

    it('compares any two deploys side by side: the changes and both documents', async () => {
      const live = await liveNumber();
      await page.getByLabel('From deploy').selectOption({ label: '#1' });
      await page.getByLabel('To deploy').selectOption({ label: `#${live} (live)` });
      await page.getByRole('button', { name: 'Compare' }).click();
      const result = page.locator('[data-testid="compare-result"]');
      await result.locator('.compare-title').waitFor(WAIT);
      assert.match(await laidOutText(result.locator('.compare-title')), new RegExp(`^From #1 to #${live}: `));
      const changes = await laidOutText(result.locator('.change-list'));
      assert.match(changes, /DELETE \/pets\/\{petId\}/);
      assert.match(changes, /GET \/pets\/\{petId\}\/toys/);
      const columns = result.locator('.compare-column');
      assert.equal(await columns.count(), 2);
      assert.equal(await laidOutText(columns.nth(0).locator('figcaption')), 'Deploy #1');
      assert.match(await laidOutText(columns.nth(0).locator('pre')), /"version": "1\.0\.0"/);
      assert.match(await laidOutText(columns.nth(1).locator('pre')), /"version": "2\.0\.0"/);
      // The lines only one side has are marked: the versions differ.
      assert.match(
        await laidOutText(columns.nth(0).locator('mark').first()),
        /"version": "1\.0\.0"|"1\.0\.0"/,
      );
      assert.deepEqual(await accessibilityViolations(page), []);
      await page.screenshot({ path: screenshotPath('deploys-history-1280'), fullPage: true });
    });

    it('shows and downloads a past deploy’s document', async () => {
      await row(1)
        .getByRole('button', { name: /^Document/ })
        .click();
      const dialog = page.locator('[data-testid="document-dialog"]');
      await dialog.locator('pre').waitFor(WAIT);
      assert.deepEqual(JSON.parse((await dialog.locator('pre').textContent()) ?? ''), V1);
      assert.deepEqual(await accessibilityViolations(page), []);
      const [json] = await Promise.all([
        page.waitForEvent('download'),
        dialog.getByRole('button', { name: 'Download JSON' }).click(),
      ]);
      assert.equal(json.suggestedFilename(), 'pets-deploy-1.json');
      assert.deepEqual(JSON.parse(await readFile(String(await json.path()), 'utf8')), V1);
      const [yaml] = await Promise.all([
        page.waitForEvent('download'),
        dialog.getByRole('button', { name: 'Download YAML' }).click(),
      ]);
      assert.equal(yaml.suggestedFilename(), 'pets-deploy-1.yaml');
      assert.match(await readFile(String(await yaml.path()), 'utf8'), /^openapi: 3\.0\.3$/m);
      await dialog.getByRole('button', { name: 'Close' }).click();
      await dialog.waitFor({ state: 'detached' });
    });

    it('marks a preview, which leaves the live site alone, with its Open preview link', async () => {
      const live = await liveNumber();
      await page.getByLabel('OpenAPI document', { exact: true }).fill(JSON.stringify(V2));
      await page.getByLabel('Deploy as a preview').check();
      await page.getByRole('button', { name: 'Deploy', exact: true }).click();
      await outcome()
        .filter({ hasText: /Preview #\d+ is ready/ })
        .waitFor(WAIT);
      assert.equal(await liveNumber(), live, 'the live deploy did not change');
      const preview = page.locator('tr[data-preview="true"]');
      assert.equal(await preview.count(), 1);
      assert.match(await laidOutText(preview), /Preview/);
      const id = await preview.getAttribute('data-deploy');
      assert.equal(
        await preview.getByRole('link', { name: /^Open preview/ }).getAttribute('href'),
        `/api/v1/projects/pets/deploys/${id}/preview-access`,
      );
      assert.equal(
        await outcome()
          .getByRole('link', { name: /^Open preview/ })
          .getAttribute('href'),
        `/api/v1/projects/pets/deploys/${id}/preview-access`,
      );
      assert.deepEqual(await accessibilityViolations(page), []);
      await page.screenshot({ path: screenshotPath('deploys-preview-1280'), fullPage: true });
    });

    it('shares a preview with an expiring link shown once, lists it and revokes it', async () => {
      const preview = page.locator('tr[data-preview="true"]');
      const id = Number(await preview.getAttribute('data-deploy'));
      await preview.getByRole('button', { name: /^Share/ }).click();
      const dialog = page.getByTestId('share-dialog');
      await dialog.waitFor(WAIT);
      await dialog.getByText('No links yet.').waitFor(WAIT);
      await dialog.getByLabel('Link works for').selectOption({ label: '1 day' });
      await dialog.getByRole('button', { name: 'Create link' }).click();
      const shown = dialog.getByTestId('share-link');
      await shown.waitFor(WAIT);
      const url = (await shown.locator('[data-field="secret"]').textContent()) ?? '';
      assert.match(url, new RegExp(`^https?://pets--${id}\\.[^/]+/\\?kennel_preview=kpl_`));
      const links = await p.ctx.db
        .selectFrom('preview_links')
        .selectAll()
        .where('deploy_id', '=', id)
        .execute();
      assert.equal(links.length, 1);
      const lifetime = Date.parse(String(links[0]?.expires_at)) - Date.parse(String(links[0]?.created_at));
      assert.equal(lifetime, 86_400_000, 'the chosen day');
      assert.ok(
        !JSON.stringify(links).includes(new URL(url).searchParams.get('kennel_preview') ?? '?'),
        'hashed',
      );
      const row = dialog.locator(`tr[data-link="${links[0]?.id}"]`);
      assert.equal(await row.getAttribute('data-state'), 'active');
      assert.deepEqual(await accessibilityViolations(page), []);
      await row.getByRole('button', { name: /^Revoke/ }).click();
      await page.getByRole('button', { name: 'Revoke', exact: true }).click();
      await dialog.locator(`tr[data-link="${links[0]?.id}"][data-state="revoked"]`).waitFor(WAIT);
      await dialog.getByRole('button', { name: 'Close' }).click();
    });

    it('fits a phone (390 px) and nothing the page loaded failed', async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      await page.reload();
      await page.getByRole('heading', { level: 2, name: 'Deploy history' }).waitFor(WAIT);
      await rows().first().waitFor(WAIT);
      assert.ok((await overflow(page)) <= 0, 'no sideways scroll');
      assert.deepEqual(await accessibilityViolations(page), []);
      await page.screenshot({ path: screenshotPath('deploys-history-390'), fullPage: true });
      await page.setViewportSize({ width: 1280, height: 900 });
      assert.deepEqual(problems, []);
    });
  });
}
