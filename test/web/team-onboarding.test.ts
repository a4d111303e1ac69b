import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { accessibilityViolations } from '../support/axe.ts';
import { launchChromium, screenshotPath, type TestBrowser } from '../support/chromium.ts';
import { expectText, signIn, textOf, WAIT } from '../support/dashboard-page.ts';
import { testDialects } from '../support/databases.ts';
import { startDns, type TestDns } from '../support/dns.ts';
import {
  deployYamlFile,
  type FreshPlatform,
  listPetsYaml,
  startFreshPlatform,
} from '../support/web-dashboard.ts';

/** A small API of Dana's own, deployed from the browser as a YAML file. */
const DANA_DOCUMENT = listPetsYaml('Dana API');

/**
 * Issue 15's "Done when", end to end: `npm start`'s entry on a fresh database, the credentials it
 * prints, and two people in Chromium. The admin invites Dana; Dana accepts from the link, creates
 * a project, deploys a document, adds two domains, makes one primary with the other redirecting to
 * it, and creates an API token (which then reads what she set, over the API). The admin makes a
 * reset link; Dana sets a new password with it and signs in. Nobody uses the CLI or the database.
 */
for (const dialect of testDialects()) {
  describe(`a team onboards in the browser from a fresh start (${dialect})`, () => {
    let dns: TestDns;
    let fresh: FreshPlatform | undefined;
    let chromium: TestBrowser;
    let admin: Page;
    let dana: Page;
    let base: string;
    let adminPassword: string;

    /** The one-time value a page shows in its secret box (a link or a token). */
    const shownSecret = async (page: Page, testId: string) => {
      const box = page.locator(`[data-testid="${testId}"]`);
      await box.waitFor(WAIT);
      return textOf(box.locator('[data-field="secret"]'));
    };

    before(async () => {
      dns = await startDns({ zones: ['example.test'] });
      await dns.setRecords('example.test', [
        { name: 'api', type: 'CNAME', value: 'dana-api.localhost' },
        { name: 'www', type: 'CNAME', value: 'dana-api.localhost' },
      ]);
      fresh = await startFreshPlatform(dialect, { DNS_SERVERS: dns.servers.join(',') });
      adminPassword = fresh.admin.password;
      assert.ok(adminPassword, fresh.server.output());
      base = fresh.base;
      chromium = await launchChromium({ mapToLoopback: ['*.example.test'] });
      admin = await (await chromium.newContext()).newPage();
      dana = await (await chromium.newContext()).newPage();
    });

    after(async () => {
      await chromium?.close();
      await fresh?.close();
      await dns?.stop();
    });

    it('the admin invites Dana, who sets up a project with domains and a token; the admin resets her password', async () => {
      // The admin signs in with the printed credentials and invites Dana to the team "Kennel".
      await signIn(admin, base, 'admin@localhost', adminPassword);
      await admin
        .getByRole('banner')
        .getByRole('link', { name: /^Kennel enterprise/ })
        .click();
      await admin.getByRole('heading', { level: 1, name: 'Kennel' }).waitFor(WAIT);
      await admin.getByLabel('Email').fill('dana@example.test');
      await admin.getByRole('button', { name: 'Invite', exact: true }).click();
      const invitation = await shownSecret(admin, 'invitation-link');
      assert.match(invitation, new RegExp(`^${base}/invitations/accept#token=kin_[\\w-]{43}$`));

      // Dana accepts from the link and lands on the team, signed in.
      await dana.goto(invitation);
      await dana.getByRole('heading', { level: 1, name: 'Join a team on Kennel' }).waitFor(WAIT);
      await dana.getByLabel('Your name').fill('Dana Reyes');
      await dana.getByLabel('Choose a password').fill('dana password 123');
      await dana.getByRole('button', { name: 'Join the team' }).click();
      await dana.getByRole('heading', { level: 1, name: 'Kennel' }).waitFor(WAIT);
      await dana.locator('header.topbar', { hasText: 'dana@example.test' }).waitFor(WAIT);

      // She creates a project on the Petstore's origin (the one the fresh start published).
      await dana.goto(`${base}/projects/petstore`);
      const origin = await textOf(dana.locator('[data-testid="origin"]'));
      assert.match(origin, /^http:\/\/127\.0\.0\.1:\d+$/);
      await dana.goto(`${base}/`);
      await dana.getByRole('link', { name: 'New project' }).click();
      await dana.getByLabel('Name').fill('Dana API');
      assert.equal(await dana.getByLabel('Slug').inputValue(), 'dana-api');
      await dana.getByLabel('Origin URL').fill(origin);
      await dana.getByRole('button', { name: 'Create project' }).click();
      await dana.getByRole('heading', { level: 1, name: 'Dana API' }).waitFor(WAIT);

      // She deploys her document as a YAML file; it goes live.
      await dana.getByRole('link', { name: 'Deploys' }).click();
      await deployYamlFile(dana, 'dana-api.yaml', DANA_DOCUMENT);

      // She adds two domains, makes api.example.test primary and www redirect to it with a 301.
      await dana.getByRole('link', { name: 'Settings · Domains' }).click();
      for (const hostname of ['api.example.test', 'www.example.test']) {
        await dana.getByLabel('Hostname').fill(hostname);
        await dana.getByRole('button', { name: 'Add domain' }).click();
        await dana.locator(`article.domain[data-hostname="${hostname}"]`).waitFor(WAIT);
      }
      const form = dana.locator('form.settings-form');
      await form.getByLabel('Primary domain').selectOption('api.example.test');
      await form.getByLabel('www.example.test', { exact: true }).selectOption('api.example.test');
      assert.equal(await form.getByLabel('Redirect status of www.example.test').inputValue(), '301');
      await form.getByRole('button', { name: 'Save primary and redirects' }).click();
      const redirect = dana.locator(
        'article.domain[data-hostname="www.example.test"] [data-testid="redirect"]',
      );
      await expectText(redirect, 'Redirects to api.example.test (301)');
      assert.equal(
        await textOf(
          dana.locator('article.domain[data-hostname="api.example.test"] [data-testid="primary"]'),
        ),
        'Primary',
      );
      assert.deepEqual(await accessibilityViolations(dana), []);
      await dana.screenshot({ path: screenshotPath('onboarding-domains-1280'), fullPage: true });

      // She creates an API token; it reads back what she set, over the API.
      await dana.locator('header.topbar').getByRole('link', { name: 'Account' }).click();
      await dana.getByLabel('Token name').fill('deploy script');
      await dana.getByRole('button', { name: 'Create token' }).click();
      const token = await shownSecret(dana, 'new-token');
      assert.match(token, /^knl_/);
      const config = await fetch(`${base}/api/v1/projects/dana-api/domain-config`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(config.status, 200);
      const body = (await config.json()) as { primary: string | null; redirects: unknown[] };
      assert.equal(body.primary, 'api.example.test');
      assert.deepEqual(body.redirects, [{ from: 'www.example.test', to: 'api.example.test', status: 301 }]);

      // The admin makes a reset link for Dana; she sets a new password with it and signs in.
      await admin.reload();
      const row = admin.locator('tr[data-member="dana@example.test"]');
      await row.waitFor(WAIT);
      await row.getByRole('button', { name: 'Reset link for Dana Reyes' }).click();
      const resetLink = await shownSecret(admin, 'reset-link');
      assert.match(resetLink, new RegExp(`^${base}/reset-password#token=krs_[\\w-]+$`));
      await dana.context().clearCookies();
      await dana.goto(resetLink);
      await dana.getByRole('heading', { level: 1, name: 'Set a new password' }).waitFor(WAIT);
      await dana.getByLabel('New password').fill('dana new password 1');
      await dana.getByRole('button', { name: 'Set password' }).click();
      await dana.getByRole('heading', { level: 1, name: 'Sign in to Kennel' }).waitFor(WAIT);
      await dana.getByLabel('Password').fill('dana new password 1');
      await dana.getByRole('button', { name: 'Sign in' }).click();
      await dana.getByRole('heading', { level: 1, name: 'Projects' }).waitFor(WAIT);
      assert.match(await textOf(dana.locator('main')), /Dana API/);
      // The old password no longer works.
      const old = await fetch(`${base}/api/v1/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'dana@example.test', password: 'dana password 123' }),
      });
      assert.equal(old.status, 401);
    });
  });
}
