import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { parseSealingKey } from '../../src/lib/sealed-box.ts';
import { createTeam } from '../../src/platform/accounts/teams.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import { AcmeIssuer } from '../../src/platform/certificates/acme-issuer.ts';
import { CertificateStore } from '../../src/platform/certificates/certificate-store.ts';
import { InternalIssuer } from '../../src/platform/certificates/internal-issuer.ts';
import { DNS_CHECK_REASONS } from '../../src/platform/domains/dns-check.ts';
import { DOMAIN_REASONS } from '../../src/platform/domains/domain-store.ts';
import { accessibilityViolations } from '../support/axe.ts';
import { launchChromium, screenshotPath, type TestBrowser } from '../support/chromium.ts';
import { closeAll } from '../support/cleanup.ts';
import {
  domainCard,
  overflow,
  signIn,
  textOf,
  WAIT,
  waitForDomainStatus,
} from '../support/dashboard-page.ts';
import { testDialects } from '../support/databases.ts';
import type { TestDns } from '../support/dns.ts';
import { startTestEdge, type TestEdge } from '../support/edge.ts';
import { secureRequestAs } from '../support/http.ts';
import { startPebble, type TestPebble } from '../support/pebble.ts';
import { startPetstore, type TestPetstore } from '../support/petstore.ts';
import {
  issueDueCertificates,
  seedPetstoreProject,
  startPlatformContext,
  type TestPlatform,
} from '../support/platform.ts';
import { dnsEnv, petstoreZones, startZones } from '../support/platform-dns.ts';

const KEY = parseSealingKey(`k1:${Buffer.alloc(32, 7).toString('base64')}`);
/** The Domains page's own wording of the platform's remedies (its records are "shown below"). */
const { inPage } = (await import(
  pathToFileURL(join(import.meta.dirname, '../../src/web/dashboard/public/domain-words.js')).href
)) as { inPage: (text: string) => string };
const isFocused = (locator: Locator) =>
  locator.evaluate(
    (el) =>
      (el as unknown as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement === el,
  );

/**
 * Issue 6's dashboard in Debian's Chromium: the platform (edge + management app) on loopback, NSD
 * for the test zones, Pebble as the CA. The browser signs in, adds a domain, reads the record,
 * the test publishes it in NSD, the browser verifies and watches it go live without a reload,
 * then removes it; a conflicting A record shows its remedy; another team sees nothing.
 */
for (const dialect of testDialects()) {
  describe(`dashboard in Chromium (${dialect})`, () => {
    let dns: TestDns;
    let p: TestPlatform;
    let pebble: TestPebble;
    let petstore: TestPetstore;
    let edge: TestEdge;
    let issuer: AcmeIssuer;
    let store: CertificateStore;
    let chromium: TestBrowser;
    let context: BrowserContext;
    let page: Page;
    let base: string;

    const issueDue = () => issueDueCertificates(p, { issuer, store });

    const httpsGet = (host: string, path: string, ca: string) =>
      secureRequestAs(edge.httpsPort, host, path, { ca });

    const card = (hostname: string) => domainCard(page, hostname);
    const waitForStatus = (hostname: string, label: string) => waitForDomainStatus(page, hostname, label);

    before(async () => {
      dns = await startZones(petstoreZones([]));
      p = await startPlatformContext(dialect, { ...dnsEnv(dns), CAA_IDENTIFIER: 'pebble.test' });
      p.clock.set(Date.now());
      petstore = await startPetstore(dialect);
      const origin = await petstore.listen();
      await seedPetstoreProject(p.ctx, origin);
      const stranger = await createUser(p.ctx, { email: 'stranger@y.test', password: 'stranger password 1' });
      await createTeam(p.ctx, stranger, 'Elsewhere');

      store = new CertificateStore(p.ctx.db, [KEY]);
      const defaultCertificate = await new InternalIssuer(await store.internalCa(new Date())).issue(
        'platform.test',
      );
      edge = await startTestEdge(p, { store, defaultCertificate });
      pebble = await startPebble({ httpPort: edge.httpPort, dnsServer: dns.servers[0] as string });
      issuer = new AcmeIssuer({
        directoryUrl: pebble.directoryUrl,
        email: 'ops@example.test',
        caPem: pebble.caPem,
        polling: { minDelayMs: 20, maxDelayMs: 200 },
      });
      chromium = await launchChromium({
        mapToLoopback: ['platform.test', '*.platform.test', '*.example.test'],
      });
      context = await chromium.newContext();
      page = await context.newPage();
      base = `http://platform.test:${edge.httpPort}`;
    });

    after(() => closeAll(chromium, edge, issuer, pebble, petstore, p, dns));

    it('signs in through the form (labels, focus order) and shows the team, the user and the project', async () => {
      await page.goto(`${base}/`);
      await page.waitForURL(/\/sign-in\?next=%2F$/);
      await page.getByLabel('Email').waitFor(WAIT);
      assert.deepEqual(await accessibilityViolations(page), []);
      assert.equal(await isFocused(page.getByLabel('Email')), true, 'the form starts focused');
      await page.keyboard.press('Tab');
      assert.equal(await isFocused(page.getByLabel('Password')), true);
      await page.keyboard.press('Tab');
      assert.equal(await isFocused(page.getByRole('button', { name: 'Sign in' })), true);
      await page.getByLabel('Email').fill('owner@x.test');
      await page.getByLabel('Password').fill('wrong password');
      await page.keyboard.press('Enter');
      await page.getByRole('alert').filter({ hasText: 'Could not sign in' }).waitFor(WAIT);
      assert.equal(await isFocused(page.getByLabel('Password')), true, 'focus returns to the password');
      await signIn(page, base, 'owner@x.test', 'owner password 1');
      assert.deepEqual(await accessibilityViolations(page), []);
      const header = page.locator('header.topbar');
      assert.match(await textOf(header), /Shop\s*pro/i);
      assert.match(await textOf(header), /owner@x\.test/);
      await page.getByRole('link', { name: 'Petstore' }).click();
      await page.getByRole('heading', { level: 1, name: 'Petstore' }).waitFor(WAIT);
      const facts = await textOf(page.locator('dl.facts'));
      assert.match(facts, /petstore\.platform\.test/);
      assert.match(facts, /#1/);
      assert.match(facts, /pro/i);
      assert.equal(await page.locator('table tbody tr').count(), 1, 'one deploy in the history');
      assert.deepEqual(await accessibilityViolations(page), []);
      await page.screenshot({ path: screenshotPath('dashboard-overview'), fullPage: true });
    });

    it('adds shop.example.test, shows the CNAME to create, verifies once DNS has it, and goes live without a reload', async () => {
      await page.getByRole('link', { name: 'Settings · Domains' }).click();
      await page.getByRole('heading', { level: 2, name: 'Domains', exact: true }).waitFor(WAIT);
      await page.getByText('No custom domains yet').waitFor(WAIT);
      await page.getByLabel('Hostname').fill('shop.example.test');
      await page.getByRole('button', { name: 'Add domain' }).click();
      await waitForStatus('shop.example.test', 'Unverified');
      const field = (name: string) => textOf(card('shop.example.test').locator(`code[data-field="${name}"]`));
      const record = {
        type: await field('type'),
        name: await field('name'),
        value: await field('value'),
        ttl: await field('ttl'),
      };
      assert.deepEqual(record, { type: 'CNAME', name: 'shop', value: 'petstore.platform.test', ttl: '3600' });
      assert.equal(
        await card('shop.example.test')
          .getByRole('button', { name: 'Copy Value petstore.platform.test' })
          .count(),
        1,
      );
      assert.match(await textOf(page.locator('pre.yaml')), /shop\.example\.test/);
      // Copy puts exactly the value on the clipboard (the plain-HTTP fallback: a selected textarea).
      await page.evaluate(
        `document.addEventListener('copy', () => { window.copied = String(getSelection()); }, { once: true })`,
      );
      const copyValue = card('shop.example.test').getByRole('button', {
        name: 'Copy Value petstore.platform.test',
      });
      await copyValue.click();
      await copyValue.filter({ hasText: 'Copied' }).waitFor(WAIT);
      assert.equal(await page.evaluate('window.copied'), 'petstore.platform.test');

      // The owner creates exactly the record the page shows.
      await dns.addRecord('example.test', {
        name: record.name,
        type: record.type as 'CNAME',
        value: record.value,
      });
      await page.evaluate('window.notReloaded = true');
      await card('shop.example.test').getByRole('button', { name: 'Verify', exact: true }).click();
      await waitForStatus('shop.example.test', 'Certificate being issued');
      // The certificate job (the platform runs it in the background) orders from Pebble.
      assert.deepEqual(await issueDue(), ['shop.example.test']);
      await waitForStatus('shop.example.test', 'Live');
      assert.equal(await page.evaluate('window.notReloaded'), true);
      assert.match(await textOf(card('shop.example.test')), /Certificate valid until/);
      assert.equal(await card('shop.example.test').getByRole('button', { name: 'Re-verify' }).count(), 0);
      const served = await httpsGet('shop.example.test', '/api/pets', await pebble.rootPem());
      assert.equal(served.status, 200);
      await page.screenshot({ path: screenshotPath('dashboard-domains'), fullPage: true });
    });

    it('shows the remedy when a conflicting A record blocks the CNAME', async () => {
      await dns.addRecord('example.test', { name: 'legacy', type: 'A', value: '192.0.2.10' });
      await page.getByLabel('Hostname').fill('legacy.example.test');
      await page.getByRole('button', { name: 'Add domain' }).click();
      await waitForStatus('legacy.example.test', 'Unverified');
      // Already at Add, in words (acronyms kept).
      assert.equal(
        await textOf(card('legacy.example.test').locator('[data-testid="notice"] .banner-title')),
        'DNS already shows a problem: a conflicting record blocks the CNAME',
      );
      await card('legacy.example.test').getByRole('button', { name: 'Verify', exact: true }).click();
      await waitForStatus('legacy.example.test', 'Failed');
      const failure = card('legacy.example.test').locator('[data-testid="failure"]');
      const text = await textOf(failure);
      // In words; the machine-readable reason is an attribute, not text.
      assert.match(text, /A conflicting record blocks the CNAME/);
      assert.doesNotMatch(text, /conflicting_record/);
      assert.equal(await failure.getAttribute('data-reason'), 'conflicting_record');
      // The remedy names this page's record ("shown below"), written for the page the user is on.
      assert.ok(text.includes(inPage(DNS_CHECK_REASONS.conflicting_record.remedy)), text);
      assert.doesNotMatch(text, /in the dashboard/);
      assert.match(text, /192\.0\.2\.10/);
      assert.deepEqual(await accessibilityViolations(page), []);
      await page.screenshot({ path: screenshotPath('dashboard-domains-failed'), fullPage: true });
    });

    it('shows a closed propagation window as stopped checks with Verify as the remedy, without a reload', async () => {
      await page.getByLabel('Hostname').fill('never.example.test');
      await page.getByRole('button', { name: 'Add domain' }).click();
      await waitForStatus('never.example.test', 'Unverified');
      // What the background checker leaves when the window closes without the record showing.
      await p.ctx.db
        .updateTable('domains')
        .set({ reason: 'not_found_yet', next_check_at: null, check_attempts: 12 })
        .where('hostname', '=', 'never.example.test')
        .execute();
      await waitForStatus('never.example.test', 'Failed');
      const text = await textOf(card('never.example.test').locator('[data-testid="failure"]'));
      assert.match(text, /Automatic checks stopped/);
      assert.equal(
        await card('never.example.test').locator('[data-testid="failure"]').getAttribute('data-reason'),
        'checks_stopped',
      );
      assert.ok(text.includes(inPage(DOMAIN_REASONS.checks_stopped.remedy)), text);
      assert.doesNotMatch(text, /retried automatically/);
    });

    it('offers Re-verify only once no certificate has come for 30 minutes, without a reload', async () => {
      await dns.addRecord('example.test', { name: 'api', type: 'CNAME', value: 'petstore.platform.test' });
      await page.getByLabel('Hostname').fill('api.example.test');
      await page.getByRole('button', { name: 'Add domain' }).click();
      await waitForStatus('api.example.test', 'Unverified');
      await card('api.example.test').getByRole('button', { name: 'Verify', exact: true }).click();
      await waitForStatus('api.example.test', 'Certificate being issued');
      const reverify = card('api.example.test').getByRole('button', { name: 'Re-verify' });
      assert.equal(await reverify.isDisabled(), true, 'not offered while the certificate may still come');
      assert.match(
        await textOf(card('api.example.test').locator('[data-testid="reverify-at"]')),
        /^Available from .+, if no certificate has come by then\.$/,
      );
      p.clock.advance(31 * 60_000);
      await card('api.example.test').locator('button[data-focus="reverify"]:enabled').waitFor(WAIT);
      await reverify.click();
      await card('api.example.test').getByText('a fresh certificate attempt has started').waitFor(WAIT);
      assert.deepEqual(await issueDue(), ['api.example.test']);
      await waitForStatus('api.example.test', 'Live');
      assert.equal(await reverify.count(), 0);
    });

    it('fits a phone: 375 px wide, no sideways scrolling', async () => {
      const phone = await chromium.newContext({
        viewport: { width: 375, height: 812 },
        isMobile: true,
        hasTouch: true,
      });
      const small = await phone.newPage();
      await signIn(small, base, 'owner@x.test', 'owner password 1');
      const started = performance.now();
      await small.goto(`${base}/projects/petstore/settings/domains`);
      await small
        .locator('article.domain[data-hostname="shop.example.test"] [data-testid="status"]')
        .waitFor(WAIT);
      const loadMs = Math.round(performance.now() - started);
      process.stdout.write(
        `# Domains page, navigation to domains shown (phone, assets cached): ${loadMs} ms\n`,
      );
      const sideways = await overflow(small);
      assert.ok(sideways <= 0, `the page scrolls sideways by ${sideways} px`);
      assert.deepEqual(await accessibilityViolations(small), []);
      await small.screenshot({ path: screenshotPath('dashboard-domains-phone'), fullPage: true });
      await phone.close();
    });

    it('removes the domain from its menu after confirmation, by keyboard first, and the host stops being served', async () => {
      // After a reload the page gets the session's CSRF token from GET /api/v1/me.
      await page.reload();
      await waitForStatus('shop.example.test', 'Live');
      const trigger = card('shop.example.test').getByRole('button', {
        name: 'More actions for shop.example.test',
      });
      await trigger.focus();
      await page.keyboard.press('Enter');
      const item = page.getByRole('menuitem', { name: 'Remove domain…' });
      await item.waitFor(WAIT);
      assert.equal(await isFocused(item), true, 'focus moves into the menu');
      await page.keyboard.press('Escape');
      assert.equal(await isFocused(trigger), true, 'Escape returns focus');
      await page.keyboard.press('Enter');
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog', { name: 'Remove shop.example.test?' });
      await dialog.waitFor(WAIT);
      assert.equal(
        await isFocused(dialog.getByRole('button', { name: 'Cancel' })),
        true,
        'the dialog opens on Cancel',
      );
      assert.deepEqual(await accessibilityViolations(page), []);
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden', ...WAIT });
      assert.equal(await isFocused(trigger), true, 'closing returns focus');
      assert.equal(await card('shop.example.test').count(), 1, 'cancelled: still there');

      await trigger.click();
      await page.getByRole('menuitem', { name: 'Remove domain…' }).click();
      await dialog.getByRole('button', { name: 'Remove domain' }).click();
      await card('shop.example.test').waitFor({ state: 'detached', ...WAIT });
      assert.doesNotMatch(await textOf(page.locator('pre.yaml')), /shop\.example\.test/);
      await assert.rejects(httpsGet('shop.example.test', '/api/pets', await pebble.rootPem()));
      const tab = await context.newPage();
      const answer = await tab.goto(`http://shop.example.test:${edge.httpPort}/api/pets`);
      assert.equal(answer?.status(), 404);
      assert.match(await textOf(tab.locator('body')), /No project is published at shop\.example\.test/);
      await tab.close();
    });

    it('shows a member of another team no trace of the project, and signs out', async () => {
      const other = await chromium.newContext();
      const stranger = await other.newPage();
      await signIn(stranger, base, 'stranger@y.test', 'stranger password 1');
      await stranger.getByText('No projects yet').waitFor(WAIT);
      await stranger.goto(`${base}/projects/petstore/settings/domains`);
      await stranger.getByRole('heading', { level: 1, name: 'Project not found' }).waitFor(WAIT);
      assert.doesNotMatch(await textOf(stranger.locator('main')), /legacy\.example\.test|Petstore/);
      await stranger.getByRole('button', { name: 'Sign out' }).click();
      await stranger.getByRole('heading', { level: 1, name: 'Sign in to Kennel' }).waitFor(WAIT);
      await stranger.goto(`${base}/projects/petstore`);
      await stranger.waitForURL(/\/sign-in\?next=%2Fprojects%2Fpetstore$/);
      await other.close();
    });
  });
}
