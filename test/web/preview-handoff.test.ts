import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { deployProject } from '../../src/platform/projects/deploys.ts';
import { screenshotPath, type TestBrowser } from '../support/chromium.ts';
import type { PlainEdge } from '../support/edge.ts';
import { listenOnLoopback } from '../support/http.ts';
import { seedProject, seedTeam } from '../support/platform.ts';
import { type SiteBrowser, startSiteBrowser } from '../support/web-sites.ts';

const documentOf = (version: string, paths: Record<string, unknown>) =>
  JSON.stringify({ openapi: '3.0.3', info: { title: 'Widgets', version }, paths });
const operation = (operationId: string) => ({
  get: { operationId, tags: ['Widgets'], responses: { '200': { description: 'OK' } } },
});

// On SQLite only: this checks the browser's side of the hand-off (redirects, the host-only
// cookie, the page's own API calls); the storage behind it runs on both in test/edge/previews.
describe('opening a preview in Chromium', () => {
  let sites: SiteBrowser;
  let edge: PlainEdge;
  let origin: Server;
  let chromium: TestBrowser;
  let previewId: number;
  const calls: string[] = [];

  before(async () => {
    origin = createServer((req, res) => {
      calls.push(`${req.url} cookie=${req.headers.cookie ?? ''}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    const originPort = await listenOnLoopback(origin);
    sites = await startSiteBrowser(async (p) => {
      p.clock.set(Date.now());
      const { owner, team } = await seedTeam(p.ctx);
      await seedProject(p.ctx, owner, {
        teamId: team.id,
        slug: 'widgets',
        name: 'Widgets',
        originUrl: `http://127.0.0.1:${originPort}`,
        document: documentOf('1.0.0', { '/widgets': operation('listWidgets') }),
      });
      previewId = (
        await deployProject(p.ctx, owner, 'widgets', {
          document: documentOf('2.0.0', {
            '/widgets': operation('listWidgets'),
            '/gadgets': operation('listGadgets'),
          }),
          preview: true,
        })
      ).id;
    });
    ({ edge, chromium } = sites);
  });

  after(async () => {
    await sites?.close();
    origin?.close();
  });

  it("takes a signed-in member from the platform to the preview's clean URL, and its console works", async () => {
    const context = await chromium.newContext();
    const platform = `http://localhost:${edge.port}`;
    const signedIn = await context.request.post(`${platform}/api/v1/session`, {
      data: { email: 'owner@x.test', password: 'owner password 1' },
    });
    assert.equal(signedIn.status(), 201);
    const page = await context.newPage();
    await page.goto(`${platform}/api/v1/projects/widgets/deploys/${previewId}/preview-access`);
    const host = `widgets--${previewId}.localhost`;
    assert.equal(page.url(), `http://${host}:${edge.port}/`, 'the token is gone from the address');
    await page.locator('html[data-reference-ready="true"]').waitFor();
    assert.match(
      (await page.locator('.kennel-preview-banner > strong').textContent()) ?? '',
      /^Preview of deploy #2 — not live\.$/,
    );
    const cookies = await context.cookies(`http://${host}:${edge.port}/`);
    assert.deepEqual(
      cookies.map((c) => [c.name, c.domain, c.httpOnly, c.sameSite]),
      [['kennel_preview', host, true, 'Lax']],
      'one host-only cookie for the preview host',
    );
    // The console calls the preview's API with the cookie the browser holds.
    calls.length = 0;
    const gadgets = page.locator('#operations-Widgets-listGadgets');
    await gadgets.locator('.opblock-summary-control').click();
    await gadgets.getByRole('button', { name: 'Test it', exact: true }).click();
    await gadgets.locator('.execute').click();
    await gadgets.locator('.live-responses-table .response-col_status').first().waitFor();
    assert.equal(
      (
        await gadgets.locator('.live-responses-table tbody .response-col_status').first().textContent()
      )?.trim(),
      '200',
    );
    assert.equal(calls.length, 1);
    // The console's call reached the origin through the preview, without the edge's own cookie.
    assert.equal(calls[0], '/gadgets cookie=');
    await page.screenshot({ path: screenshotPath('preview-handoff'), fullPage: false });
    await context.close();
  });

  it('shows anyone else the private preview page', async () => {
    const context = await chromium.newContext();
    const page = await context.newPage();
    const answer = await page.goto(`http://widgets--${previewId}.localhost:${edge.port}/`);
    assert.equal(answer?.status(), 401);
    assert.equal(await page.locator('h1').textContent(), 'Private preview');
    await context.close();
  });
});
