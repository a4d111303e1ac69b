import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { closeAll } from '../support/cleanup.ts';
import { checkBothWidths, expectText, laidOutText, textOf, WAIT } from '../support/dashboard-page.ts';
import { testDialects } from '../support/databases.ts';
import { startPlatformContext, type TestPlatform } from '../support/platform.ts';
import { type Dashboard, seedShopWithMember, startDashboard } from '../support/web-dashboard.ts';

/** A private origin: the address policy refuses it without a grant. */
const PRIVATE = 'http://10.0.0.5:8080';

/**
 * Issue 28, no dead ends: a project on a private origin needs a platform admin's grant to its team.
 * In Debian's Chromium against the real management app and database: a member is refused and told
 * whom to ask; the admin, refused too, is linked to the team's "Private origins" section, allows
 * the origin there, the member then creates the project, and the admin revokes the grant. A team
 * owner who is not an admin sees no such section (the API lets only admins list grants). Every
 * page passes axe at 1280 and 390 px; no request fails but the refusals the test makes.
 */
for (const dialect of testDialects()) {
  describe(`dashboard origin grants in Chromium (${dialect})`, () => {
    let p: TestPlatform;
    let dashboard: Dashboard;
    let admin: Page;
    let mia: Page;
    let base = '';
    let shop = 0;
    let failures: string[] = [];
    const signedInPage = (email: string, password: string) => dashboard.signedIn(email, password);

    /** Mia's new project on `origin`, submitted. */
    async function newProject(slug: string, origin: string) {
      await mia.goto(`${base}/new`);
      await mia.getByLabel('Name', { exact: true }).fill(`Internal ${slug}`);
      await mia.getByLabel('Slug').fill(slug);
      await mia.getByLabel('Origin URL').fill(origin);
      await mia.getByRole('button', { name: 'Create project' }).click();
    }

    before(async () => {
      p = await startPlatformContext(dialect);
      shop = await seedShopWithMember(p);
      dashboard = await startDashboard(p);
      ({ base, failures } = dashboard);
      admin = await signedInPage('admin@x.test', 'admin password 1');
      mia = await signedInPage('mia@x.test', 'mia password 12');
    });

    after(() => closeAll(dashboard, p));

    it('tells a member refused a private origin to ask a platform admin, with no link', async () => {
      await newProject('internal', PRIVATE);
      const error = mia.locator('#project-origin-error');
      await error.getByRole('alert').waitFor(WAIT);
      assert.equal(
        await laidOutText(error),
        `originUrl ${PRIVATE} points at a loopback, private or reserved address (10.0.0.5); projects may reach the platform's own network only with a grant. Use a public address, or ask a platform admin to grant team "Shop" the origin ${PRIVATE}. origin_not_allowed`,
      );
      assert.equal(await mia.getByTestId('origin-grant-link').count(), 0);
    });

    it('links the refused admin to the team’s Private origins, where the origin is allowed', async () => {
      await admin.goto(`${base}/projects/shop/settings`);
      await admin.getByLabel('Origin', { exact: true }).fill(PRIVATE);
      await admin.getByRole('button', { name: 'Save origin' }).click();
      const link = admin.getByTestId('origin-grant-link');
      await expectText(link, 'As a platform admin you can allow this origin for the team.', laidOutText);
      await checkBothWidths(admin, 'project-settings-origin-refused-admin');
      await link.getByRole('link').click();

      await admin.getByRole('heading', { level: 2, name: 'Private origins' }).waitFor(WAIT);
      assert.equal(new URL(admin.url()).pathname, `/teams/${shop}/settings`);
      await admin.getByTestId('origin-grants-none').waitFor(WAIT);
      assert.equal(await textOf(admin.getByTestId('origin-grants-none')), 'Shop has no private origin.');
      const field = admin.getByLabel('Allow a private origin');
      assert.equal(await field.inputValue(), PRIVATE);
      await admin.locator('#origin-grant:focus').waitFor(WAIT);

      // The API's refusal shows under the field.
      await field.fill('http://10.0.0.5:8080/api');
      await admin.getByRole('button', { name: 'Allow', exact: true }).click();
      const refused = admin.locator('#origin-grant-error');
      await refused.getByRole('alert').waitFor(WAIT);
      assert.equal(
        await laidOutText(refused),
        '"http://10.0.0.5:8080/api" is not an origin: write scheme://host:port, e.g. http://127.0.0.1:4010, or KENNEL_ORIGIN_ALLOWLIST for every origin of that setting. validation_failed',
      );

      await field.fill(PRIVATE);
      await admin.getByRole('button', { name: 'Allow', exact: true }).click();
      await admin.getByText(`Shop’s projects may now use ${PRIVATE}.`).waitFor(WAIT);
      const row = admin.locator(`tr[data-origin="${PRIVATE}"]`);
      await row.waitFor(WAIT);
      assert.equal(await textOf(row.locator('td[data-label="Origin"]')), PRIVATE);
      assert.equal(await textOf(row.locator('td[data-label="Granted by"]')), 'admin@x.test');
      assert.equal(await admin.locator('#origin-grant-error').textContent(), '');
      await checkBothWidths(admin, 'team-settings-origin-grants');
    });

    it('lets the member create a project on the granted origin', async () => {
      await newProject('internal', PRIVATE);
      await mia.getByRole('heading', { level: 1, name: 'Internal internal' }).waitFor(WAIT);
      const project = await p.ctx.db
        .selectFrom('projects')
        .select(['origin_url', 'team_id'])
        .where('slug', '=', 'internal')
        .executeTakeFirstOrThrow();
      assert.deepEqual({ ...project }, { origin_url: PRIVATE, team_id: shop });
    });

    it('revokes the grant after confirming; the origin is refused again', async () => {
      await admin.getByRole('button', { name: `Revoke ${PRIVATE}` }).click();
      const dialog = admin.getByRole('dialog');
      await dialog.getByRole('heading', { name: `Revoke ${PRIVATE}?` }).waitFor(WAIT);
      await dialog.getByRole('button', { name: 'Revoke' }).click();
      await dialog.waitFor({ state: 'detached', ...WAIT });
      await admin.getByTestId('origin-grants-none').waitFor(WAIT);
      assert.equal(
        (await p.ctx.db.selectFrom('origin_grants').select('id').where('team_id', '=', shop).execute())
          .length,
        0,
      );
      await newProject('internal-two', PRIVATE);
      await mia.locator('#project-origin-error').getByRole('alert').waitFor(WAIT);
    });

    it('shows a team owner who is not an admin no Private origins section', async () => {
      const owner = await signedInPage('owner@x.test', 'owner password 1');
      await owner.goto(`${base}/teams/${shop}/settings`);
      await owner.getByTestId('plan').waitFor(WAIT);
      assert.equal(await owner.getByRole('heading', { name: 'Private origins' }).count(), 0);
      assert.equal(await owner.getByLabel('Allow a private origin').count(), 0);
      await checkBothWidths(owner, 'team-settings-owner-no-origin-grants');
      await owner.context().close();
    });

    it('failed no request but the refusals asked for', () => {
      assert.deepEqual(failures, [
        '422 POST /api/v1/projects',
        '422 PATCH /api/v1/projects/shop',
        '400 POST /api/v1/origin-grants',
        '422 POST /api/v1/projects',
      ]);
    });
  });
}
