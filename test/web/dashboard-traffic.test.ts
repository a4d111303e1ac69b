import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { deployProject } from '../../src/platform/projects/deploys.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import { accessibilityViolations } from '../support/axe.ts';
import { launchChromium, screenshotPath, type TestBrowser } from '../support/chromium.ts';
import { expectText, laidOutText, overflow, signIn, WAIT, watchFailures } from '../support/dashboard-page.ts';
import { testDialects } from '../support/databases.ts';
import { type PlainEdge, startPlainEdge } from '../support/edge.ts';
import { listenOnLoopback, requestAs } from '../support/http.ts';
import { seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';

/** Two callers' API keys: the page may show a short prefix of each, never the key. */
const ALPHA = 'sk_live_alpha_7Qm2Xv9LpT4r8Ws1';
const BETA = 'pk_test_beta_Hn3Kd8Rz5Yc2Vb6';

/** A small API: three operations, one deprecated with a sunset, callers identified by X-API-Key. */
const DOCUMENT = {
  openapi: '3.1.0',
  info: { title: 'Pets', version: '1.0.0' },
  components: { securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-API-Key' } } },
  security: [{ key: [] }],
  paths: {
    '/pets': {
      get: { operationId: 'listPets', responses: { 200: { description: 'The pets' } } },
      post: { operationId: 'createPet', responses: { 201: { description: 'Created' } } },
    },
    '/pets/{petId}': {
      get: {
        operationId: 'getPet',
        deprecated: true,
        'x-sunset': '2026-12-31',
        parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { 200: { description: 'A pet' } },
      },
    },
  },
};

/** The origin: 201 for a POST, 500 for pet `broken`, 404 off the document, 200 otherwise. */
function startOrigin(): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const status =
      req.method === 'POST'
        ? 201
        : path === '/pets/broken'
          ? 500
          : /^\/pets(\/[^/]+)?$/.test(path)
            ? 200
            : 404;
    res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
  });
}

/**
 * Issue 27's Traffic tab in Chromium: a real edge records a known mix of requests from two
 * callers; once the recorder has written, the tab's per-operation and per-caller tables show
 * exactly those counts (callers by their label, never their key), the deprecation panel names
 * who still calls the deprecated operation, and a new request shows in the live log without a
 * reload. Checked with axe at 1280 and 390 px; nothing the page loads fails.
 */
for (const dialect of testDialects()) {
  describe(`dashboard: the Traffic tab (${dialect})`, () => {
    let p: TestPlatform;
    let origin: Server;
    let edge: PlainEdge;
    let base: string;
    let chromium: TestBrowser;
    let context: BrowserContext;
    let page: Page;
    const problems: string[] = [];

    /** A request through the edge to the `pets` site, as `key` (or with no key). */
    const call = async (method: string, path: string, key: string | null, status: number) => {
      const reply = await requestAs(edge.port, 'pets.platform.test', `/api${path}`, {
        method,
        headers: key ? { 'x-api-key': key } : {},
      });
      assert.equal(reply.status, status, `${method} ${path}: ${reply.text}`);
    };
    const operationRow = (operation: string) =>
      page.locator(`#operations-title ~ * tr[data-operation="${operation}"]`);
    const callerRow = (label: string) => page.locator(`#callers-title ~ * tr[data-caller="${label}"]`);
    const numbers = async (row: ReturnType<typeof operationRow>) => ({
      calls: await laidOutText(row.locator('[data-field="calls"]')),
      errors: await laidOutText(row.locator('[data-field="errors"]')),
    });

    before(async () => {
      p = await startPlatformContext(dialect);
      origin = startOrigin();
      const originPort = await listenOnLoopback(origin);
      const { owner, team } = await seedTeam(p.ctx);
      for (const slug of ['pets', 'quiet']) {
        await createProject(p.ctx, owner, {
          teamId: team.id,
          slug,
          name: slug === 'pets' ? 'Pets' : 'Quiet',
          originUrl: `http://127.0.0.1:${originPort}`,
        });
        await deployProject(p.ctx, owner, slug, { document: JSON.stringify(DOCUMENT) });
      }
      edge = await startPlainEdge(p);
      base = `http://platform.test:${edge.port}`;
      chromium = await launchChromium({ mapToLoopback: ['platform.test', '*.platform.test'] });
      context = await chromium.newContext({ locale: 'en-US', timezoneId: 'UTC' });
      page = await context.newPage();
      await signIn(page, base, 'owner@x.test', 'owner password 1');
      // Leaving the page closes the live log's stream: the page letting go (net::ERR_ABORTED),
      // which the watcher does not count.
      watchFailures(page, problems);

      // The platform's clock stands 20 s into a minute while the requests are made.
      p.clock.set('2026-11-22T12:00:20Z');
      // The mix: listPets 3 (ALPHA 2, BETA 1), getPet 3 (ALPHA 2, one of them a 500), createPet 1
      // (BETA), and 1 request that matches no operation (BETA, the origin's 404).
      await call('GET', '/pets', ALPHA, 200);
      await call('GET', '/pets?limit=5', ALPHA, 200);
      await call('GET', '/pets', BETA, 200);
      await call('GET', '/pets/1', ALPHA, 200);
      await call('GET', '/pets/broken', ALPHA, 500);
      await call('GET', '/pets/2', BETA, 200);
      await call('POST', '/pets', BETA, 201);
      await call('GET', '/toys', BETA, 404);
      await edge.flush();
    });

    after(async () => {
      await chromium?.close();
      await edge?.close();
      origin?.close();
      await p?.close();
    });

    it('shows per operation exactly the calls and errors sent, the deprecated one marked with its sunset', async () => {
      await page.getByRole('link', { name: 'Pets' }).click();
      await page.getByRole('link', { name: 'Traffic' }).click();
      await page.waitForURL(`${base}/projects/pets/traffic`);
      await operationRow('GET /pets').waitFor(WAIT);
      assert.deepEqual(await numbers(operationRow('GET /pets')), { calls: '3', errors: '0' });
      assert.deepEqual(await numbers(operationRow('GET /pets/{petId}')), { calls: '3', errors: '1' });
      assert.deepEqual(await numbers(operationRow('POST /pets')), { calls: '1', errors: '0' });
      assert.deepEqual(await numbers(operationRow('unmatched')), { calls: '1', errors: '0' });
      assert.equal(await page.locator('#operations-title ~ * tbody tr').count(), 4);
      assert.match(
        await laidOutText(operationRow('GET /pets/{petId}')),
        /Deprecated Sunset Dec 31, 2026 \(in \d+ days\)$/,
      );
      assert.match(await laidOutText(operationRow('GET /pets')), /Current$/);
      assert.match(
        await laidOutText(page.getByTestId('traffic-totals')),
        /^Requests 8 Errors 1 13% p50 .+ p95 .+ p99 .+$/,
      );
      assert.match(
        (await page.getByTestId('traffic-chart').locator('[role="img"]').getAttribute('aria-label')) ?? '',
        /^Requests and error rate: 8 requests in the last 24 hours, at most 8 in one minute .*; error rate 13%\.$/,
      );
    });

    it('shows per caller the labels, kinds and counts, never a key', async () => {
      const alpha = callerRow('key:sk_liv…');
      const beta = callerRow('key:pk_tes…');
      assert.deepEqual(await numbers(alpha), { calls: '4', errors: '1' });
      assert.deepEqual(await numbers(beta), { calls: '4', errors: '0' });
      assert.match(await laidOutText(alpha), /^key:sk_liv… API key 4 1 /);
      assert.equal(await page.locator('#callers-title ~ * tbody tr').count(), 2);
      const text = await laidOutText(page.locator('main'));
      assert.ok(!text.includes(ALPHA) && !text.includes(BETA), 'no full key on the page');
      assert.ok(
        !text.includes(ALPHA.slice(0, 8)) && !text.includes(BETA.slice(0, 8)),
        'at most a short prefix',
      );
    });

    it('lists who still calls the deprecated operation, with their calls and last call', async () => {
      const reach = page.locator('li.reach[data-operation="GET /pets/{petId}"]');
      assert.match(
        await laidOutText(reach),
        /^GET \/pets\/\{petId\} Sunset Dec 31, 2026 \(in \d+ days\) 2 callers in the last 7 days:/,
      );
      assert.match(
        await laidOutText(reach.locator('tr[data-caller="key:sk_liv…"]')),
        /^key:sk_liv… API key 2 /,
      );
      assert.match(
        await laidOutText(reach.locator('tr[data-caller="key:pk_tes…"]')),
        /^key:pk_tes… API key 1 /,
      );
      assert.equal(await page.locator('li.reach').count(), 1);
    });

    it('shows the request log, and a new request in it without a reload; paused, it waits', async () => {
      const log = page.getByTestId('request-log');
      await page.locator('.live-state[data-state="live"]').waitFor(WAIT);
      assert.equal(await log.locator('tbody tr').count(), 8);
      assert.match(
        await laidOutText(log.locator('tbody tr').first()),
        /GET \/api\/toys Unmatched 404 client error/,
      );
      // The query's names, not its values.
      assert.match(await laidOutText(log), /\/api\/pets\?limit= GET \/pets 200 ok/);
      assert.doesNotMatch(await laidOutText(log), /limit=5/);
      assert.match(await laidOutText(log), /GET \/api\/pets\/broken GET \/pets\/\{petId\} 500 server error/);

      await call('DELETE', '/pets', ALPHA, 200);
      await edge.flush();
      const newest = log.locator('tbody tr').first();
      await newest.filter({ hasText: 'DELETE' }).waitFor(WAIT);
      // The platform's clock is a test's: 2026-11-22, 12:00 UTC.
      assert.match(
        await laidOutText(newest),
        /^Nov 22, 2026, 12:00 PM UTC DELETE \/api\/pets Unmatched 200 ok .* key:sk_liv…/,
      );

      await page.getByRole('button', { name: 'Pause' }).click();
      await call('GET', '/pets', BETA, 200);
      await edge.flush();
      const resume = page.getByRole('button', { name: 'Resume (1 new)' });
      await resume.waitFor(WAIT);
      assert.equal(await log.locator('tbody tr').count(), 9);
      await resume.click();
      assert.equal(await log.locator('tbody tr').count(), 10);
      assert.match(await laidOutText(log.locator('tbody tr').first()), /GET \/api\/pets GET \/pets 200 ok/);
    });

    it('changes range: 1 h and 30 d hold the same requests', async () => {
      for (const [label, words] of [
        ['1 h', 'the last hour'],
        ['30 d', 'the last 30 days'],
        ['24 h', 'the last 24 hours'],
      ] as const) {
        await page.getByRole('radio', { name: label }).check();
        await page.waitForURL((url) => url.search === `?range=${label.replace(' ', '')}`);
        const note = page.locator('#operations-title ~ p', { hasText: `Calls in ${words};` });
        await note.waitFor(WAIT);
        assert.deepEqual(await numbers(operationRow('GET /pets')), { calls: '4', errors: '0' });
        assert.deepEqual(await numbers(operationRow('unmatched')), { calls: '2', errors: '0' });
      }
    });

    it('looks finished at 1280 and 390 px, passes axe, and nothing it loads fails', async () => {
      await page.reload();
      await operationRow('GET /pets').waitFor(WAIT);
      await page.locator('.chart-canvas canvas').first().waitFor(WAIT);
      await page.locator('.live-state[data-state="live"]').waitFor(WAIT);
      assert.deepEqual(await accessibilityViolations(page), []);
      assert.ok((await overflow(page)) <= 0, 'no sideways scroll at 1280 px');
      await page.screenshot({ path: screenshotPath('traffic-1280'), fullPage: true });

      await page.setViewportSize({ width: 390, height: 844 });
      await page.waitForTimeout(300);
      assert.deepEqual(await accessibilityViolations(page), []);
      assert.ok((await overflow(page)) <= 0, 'no sideways scroll at 390 px');
      await page.screenshot({ path: screenshotPath('traffic-390'), fullPage: true });

      await page.getByText('The figures as a table').first().click();
      // 10 requests by now, all in the minute of 12:00, 1 of them a 500 (the 390 px table has no header row).
      assert.equal(
        await laidOutText(page.getByTestId('traffic-chart').locator('table')),
        'Requests and error rate, each minute with requests, newest first Nov 22, 12:00 PM UTC 10 10%',
      );
      assert.deepEqual(await accessibilityViolations(page), []);
      await page.setViewportSize({ width: 1280, height: 900 });
      assert.deepEqual(problems, []);
    });

    it('says what to do while a project has no traffic', async () => {
      await page.goto(`${base}/projects/quiet/traffic`);
      const empty = page.locator('#operations-title ~ * .empty');
      await expectText(
        empty,
        `No traffic yet Requests to http://quiet.platform.test:${edge.port}/api/… appear here within 10 s.`,
        laidOutText,
      );
      assert.match(await laidOutText(page.locator('.log')), /No requests yet/);
      assert.match(
        await laidOutText(page.locator('li.reach')),
        /No caller in the last 7 days: removing it breaks nobody seen\./,
      );
      assert.deepEqual(await accessibilityViolations(page), []);
      assert.deepEqual(problems, []);
    });
  });
}
