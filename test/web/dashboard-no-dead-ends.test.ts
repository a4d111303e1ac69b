import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { Page } from 'playwright-core';
import { buildPlatformApp } from '../../src/main/platform-app.ts';
import { accessibilityViolations } from '../support/axe.ts';
import { launchChromium, screenshotPath, type TestBrowser } from '../support/chromium.ts';
import { overflow, signIn, textOf, WAIT, watchFailures } from '../support/dashboard-page.ts';
import { testDialects } from '../support/databases.ts';
import { seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';

const { formatDate } = (await import(
  pathToFileURL(join(import.meta.dirname, '../../src/web/dashboard/public/dom.js')).href
)) as { formatDate: (iso: string | null, options?: { locale?: string; timeZone?: string }) => string };

/** Issue 28: no dead ends in the dashboard (an HTML 404 page, no failing requests), a phone header in one row, times with their zone. */
for (const dialect of testDialects()) {
  describe(`the dashboard has no dead ends (${dialect})`, () => {
    let p: TestPlatform;
    let app: FastifyInstance;
    let chromium: TestBrowser;
    let base = '';
    let teamId = 0;

    before(async () => {
      p = await startPlatformContext(dialect);
      p.clock.set(Date.now());
      ({
        team: { id: teamId },
      } = await seedTeam(p.ctx));
      app = buildPlatformApp(p.ctx);
      await app.listen({ host: '127.0.0.1', port: 0 });
      base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      chromium = await launchChromium();
    });
    after(async () => {
      await chromium?.close();
      await app?.close();
      await p?.close();
    });

    /**
     * Runs `use` on a page of a fresh browser context in UTC, English, and what fails on it (issue
     * 28: the dashboard's normal pages fail no request, not a 401 "who am I" on a signed-out page
     * nor a 404 for a team without a webhook); closes it.
     */
    async function onFreshPage(use: (fresh: { page: Page; failures: string[] }) => Promise<void>) {
      const context = await chromium.newContext({ locale: 'en-GB', timezoneId: 'UTC' });
      try {
        const page = await context.newPage();
        await use({ page, failures: watchFailures(page) });
      } finally {
        await context.close();
      }
    }

    it('gives a browser at an unknown address an HTML 404 page with a working way back, axe clean', async () => {
      await onFreshPage(async ({ page, failures }) => {
        const response = await page.goto(`${base}/projects/petstore/no-such-tab`);
        assert.equal(response?.status(), 404);
        assert.equal(response?.headers()['content-type'], 'text/html; charset=utf-8');
        assert.equal(await page.title(), 'Page not found · Kennel');
        assert.equal(await textOf(page.getByRole('heading', { level: 1 })), 'Page not found');
        // The dashboard's look: its stylesheet applied (the header's panel background).
        assert.equal(
          await page.evaluate("getComputedStyle(document.querySelector('header.topbar')).backgroundColor"),
          'rgb(255, 255, 255)',
        );
        for (const width of [1280, 390]) {
          await page.setViewportSize({ width, height: 800 });
          assert.deepEqual(await accessibilityViolations(page), [], `404 page at ${width} px`);
          const sideways = await overflow(page);
          assert.ok(sideways <= 0, `the 404 page scrolls sideways by ${sideways} px at ${width} px`);
          await page.screenshot({ path: screenshotPath(`not-found-${width}`) });
        }
        assert.deepEqual(failures, ['404 GET /projects/petstore/no-such-tab'], 'only the page itself');
        failures.length = 0;
        await page.getByRole('link', { name: 'Back to the dashboard' }).click();
        // Signed out, home is the sign-in page.
        await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor(WAIT);
        assert.equal(new URL(page.url()).pathname, '/sign-in');
        assert.deepEqual(failures, []);
      });
    });

    it('keeps the Error body for the API, naming the document that exists', async () => {
      for (const accept of ['application/json', 'text/html']) {
        const answer = await fetch(`${base}/api/v1/no-such-operation`, { headers: { accept } });
        assert.equal(answer.status, 404);
        assert.deepEqual(await answer.json(), {
          code: 'route_not_found',
          message:
            "No operation at GET /api/v1/no-such-operation. The API's operations are listed in /api/v1/openapi.json.",
          status: 404,
        });
      }
      // A client that does not ask for HTML gets JSON anywhere.
      const plain = await fetch(`${base}/no-such-page`, { headers: { accept: 'application/json' } });
      assert.equal(plain.status, 404);
      assert.equal(((await plain.json()) as { code: string }).code, 'route_not_found');
      const document = await fetch(`${base}/api/v1/openapi.json`);
      assert.equal(document.status, 200);
      assert.equal(
        ((await document.json()) as { info: { title: string } }).info.title,
        'Kennel management API',
      );
    });

    it('makes no failing request on the signed-out pages (sign-in, sign-up, invitation, password reset)', async () => {
      await onFreshPage(async ({ page, failures }) => {
        const pages = [
          ['/sign-in', 'Sign in'],
          ['/sign-up', 'Create an account'],
          ['/invitations/accept', 'Join a team on Kennel'],
          ['/reset-password', 'Set a new password'],
        ] as const;
        for (const [path, heading] of pages) {
          await page.goto(`${base}${path}`);
          await page.getByRole('heading', { level: 1, name: heading }).waitFor(WAIT);
          await page.waitForLoadState('networkidle');
          assert.deepEqual(failures, [], path);
        }
        // The page asked whether it is signed in, and was told no, with a 200.
        const session = await page.request.get(`${base}/api/v1/session`);
        assert.equal(session.status(), 200);
        assert.deepEqual(await session.json(), { signedIn: false });
      });
    });

    it("opens a team's Plan and webhook tab without a webhook and fails no request", async () => {
      await onFreshPage(async ({ page, failures }) => {
        await signIn(page, base, 'owner@x.test', 'owner password 1');
        await page.goto(`${base}/teams/${teamId}/settings`);
        await page.getByRole('button', { name: 'Save endpoint' }).waitFor(WAIT);
        await page.waitForLoadState('networkidle');
        assert.deepEqual(failures, []);
        // Reloaded, the page learns who is signed in (and its CSRF token) from the same 200.
        const session = await page.request.get(`${base}/api/v1/session`);
        const state = (await session.json()) as Record<string, unknown>;
        assert.deepEqual(Object.keys(state).sort(), ['csrfToken', 'email', 'isAdmin', 'signedIn']);
        assert.deepEqual([state.signedIn, state.email, state.isAdmin], [true, 'owner@x.test', false]);
        assert.match(String(state.csrfToken), /^\S{20,}$/);
      });
    });

    it('fits the signed-in header in one row at 390 px and at 1280 px', async () => {
      await onFreshPage(async ({ page, failures }) => {
        await signIn(page, base, 'owner@x.test', 'owner password 1');
        const header = page.locator('header.topbar');
        for (const width of [390, 1280]) {
          await page.setViewportSize({ width, height: 800 });
          const box = await header.boundingBox();
          assert.ok(box, 'the header is shown');
          assert.ok(box.height <= 64, `the header is ${box.height} px high at ${width} px`);
          // Every shown item of the header sits on the one row: their vertical middles agree.
          const middles = (await page.evaluate(`[...document.querySelectorAll(
            'header.topbar a, header.topbar button, header.topbar .plan, header.topbar .user')]
            .filter((item) => item.offsetParent !== null)
            .map((item) => { const r = item.getBoundingClientRect(); return (r.top + r.bottom) / 2; })`)) as number[];
          assert.ok(middles.length >= 4, `${middles.length} items shown`);
          const spread = Math.max(...middles) - Math.min(...middles);
          assert.ok(spread <= 4, `the header's items are ${spread} px apart vertically at ${width} px`);
          for (const name of ['Projects', 'Account'])
            assert.ok(await header.getByRole('link', { name }).isVisible(), `${name} at ${width} px`);
          assert.ok(await header.getByRole('button', { name: 'Sign out' }).isVisible());
          const sideways = await overflow(page);
          assert.ok(sideways <= 0, `the page scrolls sideways by ${sideways} px at ${width} px`);
          assert.deepEqual(await accessibilityViolations(page), [], `projects at ${width} px`);
          await header.screenshot({ path: screenshotPath(`header-${width}`) });
        }
        assert.deepEqual(failures, []);
      });
    });

    it('shows times with their time zone', async () => {
      await onFreshPage(async ({ page }) => {
        await signIn(page, base, 'owner@x.test', 'owner password 1');
        await page.goto(`${base}/teams/${teamId}/people`);
        const joined = page.locator('time').first();
        await joined.waitFor(WAIT);
        const iso = String(await joined.getAttribute('datetime'));
        assert.equal(await textOf(joined), formatDate(iso, { locale: 'en-GB', timeZone: 'UTC' }));
        assert.match(await textOf(joined), /^\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} UTC$/);
      });
    });
  });
}

describe("the dashboard's one date formatter", () => {
  const at = '2026-11-27T14:03:00.000Z';

  it('writes the date, the time and the time zone', () => {
    assert.equal(formatDate(at, { locale: 'en-GB', timeZone: 'UTC' }), '27 Nov 2026, 14:03 UTC');
    assert.equal(formatDate(at, { locale: 'en-GB', timeZone: 'Europe/Paris' }), '27 Nov 2026, 15:03 CET');
    assert.equal(
      formatDate(at, { locale: 'en-US', timeZone: 'America/New_York' }),
      'Nov 27, 2026, 9:03 AM EST',
    );
    assert.equal(
      formatDate('2026-07-01T12:00:00.000Z', { locale: 'en-GB', timeZone: 'Europe/Paris' }),
      '1 Jul 2026, 14:00 CEST',
    );
  });

  it('shows a dash for no date and a text that is no date as it is', () => {
    assert.equal(formatDate(null), '—');
    assert.equal(formatDate(''), '—');
    assert.equal(formatDate('soon'), 'soon');
  });
});
