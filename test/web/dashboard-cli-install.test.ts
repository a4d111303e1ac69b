import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Page } from 'playwright-core';
import { buildPlatformApp } from '../../src/main/platform-app.ts';
import { tempDir } from '../cli/harness.ts';
import { accessibilityViolations } from '../support/axe.ts';
import { launchChromium, screenshotPath, type TestBrowser } from '../support/chromium.ts';
import { overflow, signIn, textOf, WAIT } from '../support/dashboard-page.ts';
import { testDialects } from '../support/databases.ts';
import { seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';

/** Issue 28: the Account page says how to install this platform's CLI, with a Copy button. */
for (const dialect of testDialects()) {
  describe(`the Account page's CLI install line in Chromium (${dialect})`, () => {
    let p: TestPlatform;
    let app: FastifyInstance;
    let chromium: TestBrowser;
    let page: Page;
    let base = '';
    const data = tempDir('kennel-data-');

    before(async () => {
      // The package is built into DATA_DIR/cli when the page's address is fetched.
      p = await startPlatformContext(dialect, { DATA_DIR: data.path });
      p.clock.set(Date.now());
      await seedTeam(p.ctx);
      app = buildPlatformApp(p.ctx);
      await app.listen({ host: '127.0.0.1', port: 0 });
      // A loopback address is a secure context: the page copies with the async clipboard.
      base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      chromium = await launchChromium();
      const context = await chromium.newContext();
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
      page = await context.newPage();
    });
    after(async () => {
      await chromium?.close();
      await app?.close();
      await p?.close();
      data.remove();
    });

    it('shows the install command for this address, copies it, and is axe clean at 1280 and 390 px', async () => {
      await signIn(page, base, 'owner@x.test', 'owner password 1');
      await page.goto(`${base}/account`);
      const section = page.getByRole('region', { name: 'Command-line interface' });
      await section.waitFor(WAIT);
      const line = `npm install -g ${base}/cli/kennel-cli.tgz`;
      assert.equal(await textOf(section.getByTestId('cli-install')), line);
      assert.match(await textOf(section), new RegExp(`kennel login --server ${base.replaceAll('.', '\\.')}`));
      const copy = section.getByRole('button', { name: 'Copy', exact: true });
      await copy.click();
      await section.getByRole('button', { name: 'Copied' }).waitFor(WAIT);
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), line);

      // The address it names serves the package.
      const answer = await page.request.get(`${base}/cli/kennel-cli.tgz`);
      assert.equal(answer.status(), 200);
      assert.equal(answer.headers()['content-type'], 'application/gzip');

      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 900 });
        assert.deepEqual(await accessibilityViolations(page), [], `account at ${width} px`);
        const sideways = await overflow(page);
        assert.ok(sideways <= 0, `the account page scrolls sideways by ${sideways} px at ${width} px`);
        await section.screenshot({ path: screenshotPath(`account-cli-${width}`) });
      }
    });
  });
}
