import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { addMember, createTeam } from '../../src/platform/accounts/teams.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import { addDomain } from '../../src/platform/domains/add-domain.ts';
import { accessibilityViolations } from '../support/axe.ts';
import { launchChromium, screenshotPath, type TestBrowser } from '../support/chromium.ts';
import { closeAll } from '../support/cleanup.ts';
import {
  expectText,
  overflow,
  renameProject,
  saveOrigin,
  signIn,
  textOf,
  WAIT,
  watchFailures,
} from '../support/dashboard-page.ts';
import { testDialects } from '../support/databases.ts';
import { type PlainEdge, startPlainEdge } from '../support/edge.ts';
import { requestAs } from '../support/http.ts';
import {
  seedPetstoreProject,
  seedProject,
  startPlatformContext,
  type TestPlatform,
} from '../support/platform.ts';

const DOC = JSON.stringify({
  openapi: '3.0.3',
  info: { title: 'Hobby', version: '1' },
  paths: { '/ping': { get: { responses: { '200': { description: 'pong' } } } } },
});

/**
 * Issue 28's project settings in Chromium: the Settings · General tab renames the project, shows
 * the API's refusal of a private origin under the field and saves a public one, and deletes the
 * project once its slug is typed, after listing what goes with it (counted by the API); the
 * browser lands on the project list, and the edge no longer serves the project. A member sees
 * whom to ask instead of the delete form, and on a Free team's Domains page the plan notice links
 * to the Plan page and names the team's owners. Axe clean at 1280 and 390 px; no request fails
 * but the one refused origin.
 */
for (const dialect of testDialects()) {
  describe(`dashboard: project settings (${dialect})`, () => {
    let p: TestPlatform;
    let edge: PlainEdge;
    let base: string;
    let chromium: TestBrowser;
    let context: BrowserContext;
    let page: Page;
    let teamId: number;
    const problems: string[] = [];

    /** Fails the test on a failed request or a console error, but for the refused origin (422). */
    const watch = (target: Page) =>
      watchFailures(target, problems, { expected: ['422 PATCH /api/v1/projects/petstore'] });

    before(async () => {
      p = await startPlatformContext(dialect);
      const seeded = await seedPetstoreProject(p.ctx, 'https://api.petstore-example.test');
      teamId = seeded.team.id;
      await createUser(p.ctx, { email: 'member@x.test', password: 'member password 1' });
      await addMember(p.ctx, seeded.owner, teamId, 'member@x.test', 'member');
      await addDomain(p.ctx, seeded.owner, 'petstore', 'shop.example.com');
      // A Free team: its owner and a member, who reads the plan notice.
      const hobbyist = await createUser(p.ctx, { email: 'hobby@y.test', password: 'hobby password 1' });
      const hobby = await createTeam(p.ctx, hobbyist, 'Hobby');
      await createUser(p.ctx, { email: 'pal@y.test', password: 'pal password 12' });
      await addMember(p.ctx, hobbyist, hobby.id, 'pal@y.test', 'member');
      await seedProject(p.ctx, hobbyist, {
        teamId: hobby.id,
        slug: 'hobby',
        name: 'Hobby',
        originUrl: 'https://api.hobby-example.test',
        document: DOC,
      });

      edge = await startPlainEdge(p);
      base = `http://platform.test:${edge.port}`;
      chromium = await launchChromium({ mapToLoopback: ['platform.test', '*.platform.test'] });
      context = await chromium.newContext({ locale: 'en-US', timezoneId: 'UTC' });
      page = await context.newPage();
      await page.setViewportSize({ width: 1280, height: 900 });
      watch(page);
      await signIn(page, base, 'owner@x.test', 'owner password 1');
    });

    after(() => closeAll(chromium, edge, p));

    it('renames the project from its Settings · General tab; the slug stays', async () => {
      await page.goto(`${base}/projects/petstore`);
      await page.getByRole('link', { name: 'Settings · General' }).click();
      await page.getByRole('heading', { level: 2, name: 'Name and origin' }).waitFor(WAIT);
      assert.equal(await page.title(), 'Settings · Petstore · Kennel');
      assert.equal(await page.getByLabel('Name', { exact: true }).inputValue(), 'Petstore');
      assert.equal(
        await page.getByRole('textbox', { name: 'Origin' }).inputValue(),
        'https://api.petstore-example.test',
      );
      await renameProject(page, 'Petstore Live');
      assert.equal(await page.title(), 'Settings · Petstore Live · Kennel');
      const row = await p.ctx.db
        .selectFrom('projects')
        .select(['name', 'slug'])
        .where('slug', '=', 'petstore')
        .executeTakeFirstOrThrow();
      assert.deepEqual({ ...row }, { name: 'Petstore Live', slug: 'petstore' });
      assert.deepEqual(await accessibilityViolations(page), []);
    });

    it('shows the API’s refusal of a private origin under the field, then saves a public one', async () => {
      const origin = page.getByRole('textbox', { name: 'Origin' });
      await origin.fill('http://10.0.0.5:8080');
      await page.getByRole('button', { name: 'Save origin' }).click();
      const error = page.locator('#project-origin-error p');
      await expectText(
        error,
        'originUrl http://10.0.0.5:8080 points at a loopback, private or reserved address (10.0.0.5); projects may reach the platform\'s own network only with a grant. Use a public address, or ask a platform admin to grant team "Shop" the origin http://10.0.0.5:8080. origin_not_allowed',
      );
      assert.equal(await origin.getAttribute('aria-invalid'), 'true');
      assert.equal(await page.evaluate('document.activeElement?.id'), 'project-origin');
      assert.deepEqual(await accessibilityViolations(page), []);
      const unchanged = await p.ctx.db
        .selectFrom('projects')
        .select('origin_url')
        .where('slug', '=', 'petstore')
        .executeTakeFirstOrThrow();
      assert.equal(unchanged.origin_url, 'https://api.petstore-example.test');

      await saveOrigin(
        page,
        origin,
        'https://api2.petstore-example.test/',
        'https://api2.petstore-example.test',
      );
      assert.equal(await origin.inputValue(), 'https://api2.petstore-example.test');
    });

    it('fits 390 px, axe clean there', async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      await page.reload();
      await page.getByRole('heading', { level: 2, name: 'Delete this project' }).waitFor(WAIT);
      await page
        .getByTestId('deletion-holdings')
        .getByText(/removes/)
        .waitFor(WAIT);
      assert.ok((await overflow(page)) <= 0, 'no sideways scrolling at 390 px');
      assert.deepEqual(await accessibilityViolations(page), []);
      await page.screenshot({ path: screenshotPath(`project-settings-390-${dialect}`), fullPage: true });
      await page.setViewportSize({ width: 1280, height: 900 });
    });

    it('tells a member whom to ask instead of offering the delete form', async () => {
      const memberContext = await chromium.newContext({ locale: 'en-US', timezoneId: 'UTC' });
      const member = await memberContext.newPage();
      watch(member);
      await signIn(member, base, 'member@x.test', 'member password 1');
      await member.goto(`${base}/projects/petstore/settings`);
      const note = member.getByTestId('delete-owners-only');
      await expectText(
        note,
        'Only the owners of team Shop (and platform admins) can delete this project. Ask one of them if it should go.',
      );
      assert.equal(await member.getByRole('button', { name: 'Delete project' }).count(), 0);
      assert.deepEqual(await accessibilityViolations(member), []);
      await memberContext.close();
    });

    it('on a Free team’s Domains page, the plan notice links to the Plan page and names the owners', async () => {
      const palContext = await chromium.newContext({ locale: 'en-US', timezoneId: 'UTC' });
      const pal = await palContext.newPage();
      watch(pal);
      await signIn(pal, base, 'pal@y.test', 'pal password 12');
      await pal.goto(`${base}/projects/hobby/settings/domains`);
      const note = pal.getByTestId('add-blocked');
      await note
        .getByText('Team Hobby’s owners can arrange it with a platform admin: ask hobby@y.test.')
        .waitFor(WAIT);
      const link = note.getByRole('link', { name: 'Plan page' });
      const hobbyTeam = await p.ctx.db
        .selectFrom('teams')
        .select('id')
        .where('name', '=', 'Hobby')
        .executeTakeFirstOrThrow();
      assert.equal(await link.getAttribute('href'), `/teams/${hobbyTeam.id}/settings`);
      assert.deepEqual(await accessibilityViolations(pal), []);
      await link.click();
      await pal.getByTestId('plan').waitFor(WAIT);
      assert.equal(await textOf(pal.getByTestId('plan')), 'Free');
      await palContext.close();
    });

    it('deletes the project once its slug is typed, after saying what goes with it', async () => {
      await page.goto(`${base}/projects/petstore/settings`);
      const holdings = page.getByTestId('deletion-holdings');
      await holdings.getByText(/removes/).waitFor(WAIT);
      assert.equal(
        await textOf(holdings),
        'Deleting Petstore Live removes, with no undo: 1 custom domain, 0 certificates and 1 deploy, with its changelog, CORS policy and traffic. Its addresses stop answering at once, and the slug petstore becomes free for anyone.',
      );
      const confirm = page.getByLabel('Type the project’s slug, petstore, to confirm');
      const remove = page.getByRole('button', { name: 'Delete project' });
      assert.equal(await remove.isDisabled(), true);
      await confirm.fill('petstor');
      assert.equal(await remove.isDisabled(), true);
      assert.deepEqual(await accessibilityViolations(page), []);
      assert.equal((await requestAs(edge.port, 'petstore.platform.test', '/')).status, 200);

      await confirm.fill('petstore');
      assert.equal(await remove.isDisabled(), false);
      await remove.click();
      const flash = page.getByTestId('flash');
      await expectText(
        flash,
        'Project Petstore Live (petstore) was deleted, with 1 custom domain, 0 certificates and 1 deploy.',
      );
      assert.equal(new URL(page.url()).pathname, '/');
      assert.equal(await page.getByRole('link', { name: 'Petstore Live' }).count(), 0);
      assert.deepEqual(await accessibilityViolations(page), []);

      const gone = await requestAs(edge.port, 'petstore.platform.test', '/', {
        headers: { accept: 'application/json' },
      });
      assert.equal(gone.status, 404);
      assert.equal((JSON.parse(gone.text) as { code: string }).code, 'host_not_found');
      assert.equal(
        (await p.ctx.db.selectFrom('projects').select('id').where('slug', '=', 'petstore').execute()).length,
        0,
      );
      assert.deepEqual(problems, []);
    });
  });
}
