import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { accessibilityViolations } from '../support/axe.ts';
import { launchChromium, screenshotPath, type TestBrowser } from '../support/chromium.ts';
import { overflow, signIn, textOf, watchFailures } from '../support/dashboard-page.ts';
import { testDialects } from '../support/databases.ts';
import { type PlainEdge, startPlainEdge } from '../support/edge.ts';
import { listenOnLoopback } from '../support/http.ts';
import { seedPetstoreProject, startPlatformContext, type TestPlatform } from '../support/platform.ts';

const WAIT = { timeout: 30_000 };

/**
 * Issue 28's CORS policy in Chromium: the project's Settings · CORS tab shows the API's problems
 * under their fields and saves a policy; a page on another origin (app.example.test, its own
 * server and port) then calls the published API with a preflighted PUT and reads the answer and
 * an exposed header; with the policy off the browser blocks the same call. The tab is axe clean
 * at 1280 and 390 px and fits the phone's width.
 */

/** The project's origin: answers what it was asked, never with CORS headers; OPTIONS is 405 (as most APIs). */
function startOrigin(): Server {
  return createServer((req, res) => {
    if (req.method === 'OPTIONS') {
      res.writeHead(405, { 'content-type': 'application/json' }).end('{"code":"method_not_allowed"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', etag: '"v7"' });
    res.end(JSON.stringify({ method: req.method, url: req.url }));
  });
}

/** The browser app on its own origin: a blank page the test runs fetch in. */
function startApp(): Server {
  return createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html lang="en"><title>App</title><h1>App</h1></html>');
  });
}

for (const dialect of testDialects()) {
  describe(`dashboard: a project's CORS policy, used by a browser app (${dialect})`, () => {
    let p: TestPlatform;
    let origin: Server;
    let app: Server;
    let edge: PlainEdge;
    let base: string;
    let appOrigin: string;
    let apiUrl: string;
    let chromium: TestBrowser;
    let context: BrowserContext;
    let page: Page;
    let appPage: Page;
    const problems: string[] = [];

    /** The app's preflighted call: a JSON PUT with a bearer token, from the app's page. */
    const callFromApp = () =>
      appPage.evaluate(async (url) => {
        try {
          const answer = await fetch(url, {
            method: 'PUT',
            headers: { 'content-type': 'application/json', authorization: 'Bearer app-token' },
            body: JSON.stringify({ name: 'Rex' }),
          });
          return {
            ok: true,
            status: answer.status,
            body: await answer.json(),
            etag: answer.headers.get('etag'),
          };
        } catch (error) {
          return { ok: false, error: String(error) };
        }
      }, apiUrl);

    const field = (id: string) => page.locator(`#${id}`);

    before(async () => {
      p = await startPlatformContext(dialect);
      origin = startOrigin();
      await seedPetstoreProject(p.ctx, `http://127.0.0.1:${await listenOnLoopback(origin)}`);
      app = startApp();
      const appPort = await listenOnLoopback(app);
      edge = await startPlainEdge(p);
      base = `http://platform.test:${edge.port}`;
      appOrigin = `http://app.example.test:${appPort}`;
      apiUrl = `http://petstore.platform.test:${edge.port}/api/pets/1`;
      chromium = await launchChromium({
        mapToLoopback: ['platform.test', '*.platform.test', 'app.example.test'],
      });
      context = await chromium.newContext({ locale: 'en-US', timezoneId: 'UTC' });
      page = await context.newPage();
      await signIn(page, base, 'owner@x.test', 'owner password 1');
      // The one refused save is the point of a test below.
      watchFailures(page, problems, { expected: ['422 PUT /api/v1/projects/petstore/cors'] });
      appPage = await context.newPage();
      await appPage.goto(`${appOrigin}/`);
    });

    after(async () => {
      await chromium?.close();
      await edge?.close();
      origin?.close();
      app?.close();
      await p?.close();
    });

    it('with CORS off (the default), the browser blocks the app’s call', async () => {
      const result = await callFromApp();
      assert.equal(result.ok, false, JSON.stringify(result));
      assert.match(String(result.error), /Failed to fetch/);
    });

    it('the CORS tab shows the default policy, off', async () => {
      await page.goto(`${base}/projects/petstore`);
      await page.getByRole('link', { name: 'Settings · CORS' }).click();
      await page.getByRole('heading', { level: 2, name: 'CORS' }).waitFor(WAIT);
      assert.equal(await page.title(), 'CORS · Petstore · Kennel');
      assert.equal(await field('cors-enabled').isChecked(), false);
      assert.equal(await field('cors-methods').inputValue(), 'GET\nHEAD\nPOST\nPUT\nPATCH\nDELETE');
      assert.equal(await field('cors-headers').inputValue(), 'authorization\ncontent-type');
      assert.equal(await field('cors-max-age').inputValue(), '600');
      assert.deepEqual(await accessibilityViolations(page), []);
    });

    it('shows each problem under its field and changes nothing', async () => {
      await field('cors-enabled').check();
      await field('cors-origins').fill(`${appOrigin}/app\n*`);
      await field('cors-credentials').check();
      await page.getByRole('button', { name: 'Save CORS policy' }).click();
      await page.locator('#cors-origins-error p').waitFor(WAIT);
      assert.equal(
        await textOf(page.locator('#cors-origins-error p')),
        `"${appOrigin}/app" is not an exact origin (no path, query, trailing slash or user; lower-case host; no default port): write ${appOrigin}. \`*\` allows every origin: list it alone, or list exact origins without it. \`*\` cannot be used with credentials (browsers refuse it): list exact values, or turn credentials off.`,
      );
      assert.equal(await field('cors-origins').getAttribute('aria-invalid'), 'true');
      assert.equal(
        await page.evaluate('document.activeElement?.id'),
        'cors-origins',
        'the first field with a problem has the focus',
      );
      assert.equal(
        await textOf(page.locator('#cors-error')),
        'Nothing was changed: fix the fields marked above.',
      );
      assert.deepEqual(await accessibilityViolations(page), []);
      const result = await callFromApp();
      assert.equal(result.ok, false);
    });

    it('saves a policy, and the app’s call then succeeds and reads an exposed header', async () => {
      await field('cors-origins').fill(appOrigin);
      await field('cors-credentials').uncheck();
      await field('cors-expose').fill('ETag');
      await page.getByRole('button', { name: 'Save CORS policy' }).click();
      await page.getByText(`Saved. CORS is on for ${appOrigin}.`).waitFor(WAIT);
      assert.equal(await page.locator('#cors-origins-error').textContent(), '');
      assert.equal(await field('cors-origins').getAttribute('aria-invalid'), null);
      assert.equal(await field('cors-expose').inputValue(), 'etag');
      const result = await callFromApp();
      assert.deepEqual(result, {
        ok: true,
        status: 200,
        body: { method: 'PUT', url: '/pets/1' },
        etag: '"v7"',
      });
    });

    it('fits 390 px and stays axe clean there', async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      await page.reload();
      await page.getByRole('heading', { level: 2, name: 'CORS' }).waitFor(WAIT);
      assert.ok((await overflow(page)) <= 0, 'no sideways scrolling at 390 px');
      assert.deepEqual(await accessibilityViolations(page), []);
      await page.screenshot({ path: screenshotPath(`dashboard-cors-390-${dialect}`), fullPage: true });
      await page.setViewportSize({ width: 1280, height: 900 });
    });

    it('turned off from the tab, the browser blocks the call again at once', async () => {
      await field('cors-enabled').uncheck();
      await page.getByRole('button', { name: 'Save CORS policy' }).click();
      await page.getByText('Saved. CORS is off.').waitFor(WAIT);
      const result = await callFromApp();
      assert.equal(result.ok, false, JSON.stringify(result));
      assert.deepEqual(problems, []);
    });
  });
}
