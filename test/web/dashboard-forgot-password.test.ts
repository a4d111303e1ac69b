import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { loadPlatformConfig } from '../../src/config/index.ts';
import { buildPlatformApp } from '../../src/main/platform-app.ts';
import { RESET_REQUEST_ANSWER } from '../../src/platform/accounts/request-password-reset.ts';
import type { TestBrowser } from '../support/chromium.ts';
import {
  checkBothWidths,
  expectText,
  laidOutText,
  signIn,
  WAIT,
  watchFailures,
} from '../support/dashboard-page.ts';
import { testDialects } from '../support/databases.ts';
import { seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';
import { SmtpReceiver, textOfMail } from '../support/smtp.ts';
import { type Dashboard, listenOnPort, startDashboard } from '../support/web-dashboard.ts';

/**
 * Issue 28 in Debian's Chromium: "Forgot password?" on the sign-in page mails a reset link (a
 * real SMTP server on loopback) whose page sets the new password; without mail the page says whom
 * to ask. The Account page's token form takes an expiry and a scope, and the list shows both.
 */
for (const dialect of testDialects()) {
  describe(`forgot password and token scopes in the dashboard (${dialect})`, () => {
    let p: TestPlatform;
    let dashboard: Dashboard;
    let unmailed: FastifyInstance;
    let chromium: TestBrowser;
    const smtp = new SmtpReceiver();
    let base = '';
    let unmailedBase = '';

    before(async () => {
      const smtpUrl = await smtp.start();
      p = await startPlatformContext(dialect, { SMTP_URL: smtpUrl });
      p.clock.set(Date.now());
      await seedTeam(p.ctx);
      dashboard = await startDashboard(p);
      ({ base, chromium } = dashboard);
      // The same platform as its operator would run it without SMTP_URL.
      unmailed = buildPlatformApp({
        ...p.ctx,
        config: loadPlatformConfig({ PLATFORM_DOMAIN: 'platform.test' }),
      });
      unmailedBase = `http://platform.test:${await listenOnPort(unmailed)}`;
    });
    after(async () => {
      await dashboard?.close();
      await unmailed?.close();
      await p?.close();
      await smtp.stop();
    });

    it('mails a reset link from "Forgot password?"; its page sets the new password', async () => {
      const page = await (await chromium.newContext()).newPage();
      const failures = watchFailures(page);
      await page.goto(`${base}/sign-in`);
      await page.getByRole('link', { name: 'Forgot password?' }).click();
      await page.getByRole('heading', { level: 1, name: 'Forgot password?' }).waitFor(WAIT);
      assert.equal(new URL(page.url()).pathname, '/forgot-password');
      await page.getByLabel('Email').waitFor(WAIT);
      await checkBothWidths(page, 'forgot-password');

      await page.getByLabel('Email').fill('owner@x.test');
      await page.getByRole('button', { name: 'Mail me a reset link' }).click();
      const status = page.getByRole('status').filter({ hasText: 'Check your mail' });
      await expectText(status, `Check your mail ${RESET_REQUEST_ANSWER}`, laidOutText);
      await checkBothWidths(page, 'forgot-password-sent');

      for (let i = 0; i < 400 && smtp.mails.length === 0; i++) await sleep(50);
      const [mail] = smtp.mails;
      assert.ok(mail, 'the reset mail arrived');
      assert.deepEqual(mail.to, ['owner@x.test']);
      const link = /^ {2}(http:\/\/platform\.test:\d+\/reset-password#token=krs_[\w-]{43})\r?$/m.exec(
        textOfMail(mail),
      )?.[1];
      assert.ok(link, textOfMail(mail));
      assert.ok(link.startsWith(`${base}/reset-password#token=`), link);

      await page.goto(link);
      await page.getByRole('heading', { level: 1, name: 'Set a new password' }).waitFor(WAIT);
      await page.getByLabel('New password').fill('mailed new password');
      await page.getByRole('button', { name: 'Set password' }).click();
      await page.getByRole('heading', { level: 1, name: 'Sign in to Kennel' }).waitFor(WAIT);
      await page.getByText('Your new password is set').waitFor(WAIT);
      await signIn(page, base, 'owner@x.test', 'mailed new password');
      assert.deepEqual(failures, []);
    });

    it('says whom to ask when the platform sends no mail', async () => {
      const page = await (await chromium.newContext()).newPage();
      const failures = watchFailures(page);
      await page.goto(`${unmailedBase}/sign-in`);
      await page.getByRole('link', { name: 'Forgot password?' }).click();
      const ask = page.getByTestId('ask-for-reset');
      await expectText(
        ask,
        'Ask an owner of your team: on the team’s People page they can make a password reset link for you. No team owner can help (you are the platform admin, say)? The operator runs npm run reset-password -- <your email> on the server.',
        laidOutText,
      );
      assert.equal(await page.getByLabel('Email').count(), 0, 'no form to fill in vain');
      await checkBothWidths(page, 'forgot-password-no-mail');
      assert.deepEqual(failures, []);
    });

    it('creates a read-only token with an expiry on the Account page, and lists its scope and expiry', async () => {
      const page = await (await chromium.newContext()).newPage();
      const failures = watchFailures(page);
      await signIn(page, base, 'admin@x.test', 'admin password 1');
      await page.goto(`${base}/account`);
      await page.getByRole('heading', { level: 1, name: 'Account' }).waitFor(WAIT);
      await page.getByLabel('Token name').fill('grafana');
      await page.getByLabel('Expires').selectOption({ label: '30 days' });
      await page.getByLabel('Scope').selectOption({ label: 'Read-only' });
      await page.getByRole('button', { name: 'Create token' }).click();
      await page.getByTestId('new-token').waitFor(WAIT);
      const row = page.locator('tr[data-token="grafana"]');
      await row.waitFor(WAIT);
      const stored = await p.ctx.db
        .selectFrom('api_tokens')
        .select(['scope', 'expires_at', 'created_at'])
        .where('name', '=', 'grafana')
        .executeTakeFirstOrThrow();
      assert.equal(stored.scope, 'read');
      assert.equal(Date.parse(stored.expires_at ?? '') - Date.parse(stored.created_at), 30 * 86_400_000);
      assert.equal(await row.locator('td[data-label="Scope"]').textContent(), 'Read-only');
      assert.equal(
        await row.locator('td[data-label="Expires"] time').getAttribute('datetime'),
        stored.expires_at,
      );
      await page.getByLabel('Token name').fill('deploys');
      await page.getByRole('button', { name: 'Create token' }).click();
      const second = page.locator('tr[data-token="deploys"]');
      await second.waitFor(WAIT);
      assert.equal(await second.locator('td[data-label="Scope"]').textContent(), 'Full access');
      assert.equal(await second.locator('td[data-label="Expires"]').textContent(), 'Never');
      await checkBothWidths(page, 'account-token-scopes');
      assert.deepEqual(failures, []);
    });
  });
}
