import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Locator } from 'playwright-core';
import { screenshotPath } from '../support/chromium.ts';
import { listenOnLoopback, requestAs } from '../support/http.ts';
import { OPENAPI_31_DOCUMENT } from '../support/openapi-31.ts';
import { seedProject, seedTeam } from '../support/platform.ts';
import { openReference, type SiteBrowser, startSiteBrowser } from '../support/web-sites.ts';

const textOf = async (locator: Locator) => ((await locator.textContent()) ?? '').trim();

/**
 * A project deployed with an OpenAPI 3.1 document is published like a 3.0 one: the document as
 * sent at /openapi.json, and a reference page where Swagger UI shows its operations, the
 * deprecated one with its sunset date, and its webhooks; without JavaScript the page lists the
 * webhooks too. SQLite only, like test/web/reference.test.ts: what it checks is the page.
 */
describe('the published reference of an OpenAPI 3.1 project in Chromium', () => {
  let sites: SiteBrowser;
  let origin: Server;
  let port: number;
  let context: BrowserContext;

  before(async () => {
    origin = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('[]');
    });
    const originPort = await listenOnLoopback(origin);
    sites = await startSiteBrowser(async (p) => {
      const { owner, team } = await seedTeam(p.ctx);
      const { deploy } = await seedProject(p.ctx, owner, {
        teamId: team.id,
        slug: 'club',
        name: 'Kennel club',
        originUrl: `http://127.0.0.1:${originPort}`,
        document: JSON.stringify(OPENAPI_31_DOCUMENT),
      });
      assert.equal(deploy?.status, 'succeeded', deploy?.problems.join('\n'));
    });
    port = sites.port;
    context = await sites.chromium.newContext();
    sites.watchConsole(context);
  });

  after(async () => {
    await sites?.close();
    origin?.close();
  });

  it('publishes the 3.1 document as sent, its servers naming the site', async () => {
    const answer = await requestAs(port, 'club.localhost', '/openapi.json');
    assert.equal(answer.status, 200);
    assert.deepEqual(JSON.parse(answer.text), {
      ...OPENAPI_31_DOCUMENT,
      servers: [
        { url: 'https://club.localhost/api', description: 'The API on this site' },
        { url: '/api', description: 'The API on this site, relative to the address of this document' },
      ],
    });
  });

  it('lists the operations by tag in the sidebar, linked, and the webhooks under their own heading, in the HTML itself', async () => {
    const page = await requestAs(port, 'club.localhost', '/');
    assert.equal(page.status, 200);
    const sidebar = /<div class="kennel-operations">(.*?)<\/div>\n<\/nav>/s.exec(page.text)?.[1] ?? '';
    assert.equal(
      sidebar,
      '<section class="kennel-tag"><h2>Breeds</h2><ul>' +
        '<li><a href="#/Breeds/listBreeds"><span class="kennel-method kennel-method-get">GET</span> <code class="kennel-path">/breeds</code> <span class="kennel-summary">List breeds</span></a></li>' +
        '<li><a href="#/Breeds/getBreed"><span class="kennel-method kennel-method-get">GET</span> <code class="kennel-path">/breeds/{breedId}</code> <span class="kennel-summary">Read a breed</span> <span class="kennel-deprecated">deprecated — sunset 2027-06-30</span></a></li>' +
        '</ul></section><section class="kennel-tag"><h2>Webhooks</h2><ul>' +
        '<li><span class="kennel-method kennel-method-post">POST</span> <code class="kennel-path">litterAnnounced</code> <span class="kennel-summary">A litter was announced</span></li>' +
        '</ul></section>',
    );
  });

  it('shows the operations, the sunset of the deprecated one, and the webhook with its body', async () => {
    const page = await context.newPage();
    await openReference(page, `${sites.site('club')}/`);
    assert.equal(await page.title(), 'Kennel club — API reference');
    assert.equal(await textOf(page.locator('#operations-tag-Breeds a')), 'Breeds');
    const deprecated = page.locator('#operations-Breeds-getBreed');
    assert.equal(await textOf(deprecated.locator('.kennel-deprecated')), 'Deprecated · sunset 2027-06-30');

    // Swagger UI 5's Webhooks section: the webhook, its method and summary.
    const webhooks = page.locator('.webhooks');
    await webhooks.waitFor();
    assert.equal(await textOf(webhooks.locator('h2').first()), 'Webhooks');
    const hook = webhooks.locator('.opblock').filter({ hasText: 'litterAnnounced' });
    assert.equal(await hook.count(), 1);
    assert.equal(await textOf(hook.locator('.opblock-summary-method')), 'POST');
    assert.equal(await textOf(hook.locator('.opblock-summary-description')), 'A litter was announced');
    // Expanded, it shows the body the API will send.
    await hook.locator('.opblock-summary-control').click();
    await hook.locator('.opblock-body').waitFor();
    assert.match(await textOf(hook.locator('.opblock-body')), /litter\.announced/);
    await page.screenshot({ path: screenshotPath('reference-openapi31'), fullPage: true });
    await page.close();
    assert.deepEqual(sites.consoleErrors, []);
  });
});
