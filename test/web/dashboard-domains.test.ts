import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { parseSealingKey } from '../../src/lib/sealed-box.ts';
import { petstoreDocument } from '../../src/petstore/index.ts';
import { createTeam } from '../../src/platform/accounts/teams.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import { CertificateStore } from '../../src/platform/certificates/certificate-store.ts';
import { InternalIssuer } from '../../src/platform/certificates/internal-issuer.ts';
import type { Actor } from '../../src/platform/context.ts';
import { readDomainConfig } from '../../src/platform/domains/apply-domain-config.ts';
import { DNS_CHECK_REASONS } from '../../src/platform/domains/dns-check.ts';
import { DOMAIN_REASONS } from '../../src/platform/domains/domain-store.ts';
import { inspectDomain } from '../../src/platform/domains/read-domains.ts';
import { accessibilityViolations } from '../support/axe.ts';
import { launchChromium, screenshotPath, type TestBrowser } from '../support/chromium.ts';
import { closeAll } from '../support/cleanup.ts';
import {
  domainCard,
  expectText,
  overflow,
  signIn,
  textOf,
  WAIT,
  waitForDomainStatus,
} from '../support/dashboard-page.ts';
import { testDialects } from '../support/databases.ts';
import type { TestDns } from '../support/dns.ts';
import { startTestEdge, type TestEdge } from '../support/edge.ts';
import { requestAs } from '../support/http.ts';
import { startPetstore, TEST_DEPRECATION, type TestPetstore } from '../support/petstore.ts';
import {
  issueDueCertificates,
  seedPetstoreProject,
  seedProject,
  startPlatformContext,
  type TestPlatform,
} from '../support/platform.ts';
import { dnsEnv, petstoreZones, startZones } from '../support/platform-dns.ts';

const KEY = parseSealingKey(`k1:${Buffer.alloc(32, 5).toString('base64')}`);
const DEFAULT_HOST = 'petstore.platform.test';
/**
 * Issue 15's Domains page in Chromium, on NSD DNS and the real edge: the primary domain and a
 * 301 redirect set from the form (and then served by the edge), Re-verify with the time it is
 * offered, the next automatic check, statuses and reasons in words, a Free team's closed add form
 * worded for who is looking, and the apex records table at 1280 px and 390 px.
 */
for (const dialect of testDialects()) {
  describe(`the Domains page in Chromium (${dialect})`, () => {
    let dns: TestDns;
    let p: TestPlatform;
    let petstore: TestPetstore;
    let edge: TestEdge;
    let store: CertificateStore;
    let issuer: InternalIssuer;
    let chromium: TestBrowser;
    let context: BrowserContext;
    let page: Page;
    let base: string;
    let owner: Actor;
    let hobbyTeamId: number;

    const issueDue = () => issueDueCertificates(p, { issuer, store });

    const card = (hostname: string, target = page) => domainCard(target, hostname);
    const waitForStatus = (hostname: string, label: string) => waitForDomainStatus(page, hostname, label);
    async function addDomain(hostname: string) {
      await page.getByLabel('Hostname').fill(hostname);
      await page.getByRole('button', { name: 'Add domain' }).click();
      await waitForStatus(hostname, 'Unverified');
    }
    const verify = (hostname: string) =>
      card(hostname).getByRole('button', { name: 'Verify', exact: true }).click();

    before(async () => {
      dns = await startZones(petstoreZones(['shop', 'www', 'api']));
      p = await startPlatformContext(dialect, dnsEnv(dns));
      p.clock.set(Date.now());
      petstore = await startPetstore(dialect);
      const origin = await petstore.listen();
      ({ owner } = await seedPetstoreProject(p.ctx, origin));
      const document = JSON.stringify(petstoreDocument(TEST_DEPRECATION));
      // A Free team with a deployed project: its add form stays closed.
      const hobbyist = await createUser(p.ctx, { email: 'hobby@y.test', password: 'hobby password 1' });
      const hobby = await createTeam(p.ctx, hobbyist, 'Hobby');
      hobbyTeamId = hobby.id;
      await seedProject(p.ctx, hobbyist, {
        teamId: hobby.id,
        slug: 'hobby',
        name: 'Hobby',
        originUrl: origin,
        document,
      });

      store = new CertificateStore(p.ctx.db, [KEY]);
      issuer = new InternalIssuer(await store.internalCa(p.clock.now()));
      edge = await startTestEdge(p, { store, defaultCertificate: await issuer.issue('platform.test') });
      chromium = await launchChromium({
        mapToLoopback: ['platform.test', '*.platform.test', '*.example.test'],
      });
      context = await chromium.newContext();
      page = await context.newPage();
      base = `http://platform.test:${edge.httpPort}`;
      await signIn(page, base, 'owner@x.test', 'owner password 1');
      await page.goto(`${base}/projects/petstore/settings/domains`);
      await page.getByText('No custom domains yet').waitFor(WAIT);
    });

    after(() => closeAll(chromium, edge, petstore, p, dns));

    it('has words for every reason the platform can give, and shows no reason code as text', async () => {
      const words = (await import(
        pathToFileURL(join(import.meta.dirname, '../../src/web/dashboard/public/domain-words.js')).href
      )) as { REASON_LABELS: Record<string, string> };
      const reasons = [
        ...Object.keys(DNS_CHECK_REASONS),
        ...Object.keys(DOMAIN_REASONS),
        'certificate_failed',
        'mixed_scripts',
      ];
      for (const reason of reasons) assert.ok(words.REASON_LABELS[reason], `no words for ${reason}`);

      // lost.example.test has no record: after a check it waits for DNS (reason not_found_yet).
      await addDomain('lost.example.test');
      await verify('lost.example.test');
      const waiting = card('lost.example.test').locator('[data-testid="waiting"]');
      await waiting.waitFor(WAIT);
      assert.equal(await waiting.getAttribute('data-reason'), 'not_found_yet');
      assert.match(await textOf(waiting), /^Waiting for DNSRecord not found yet/);
      assert.match(await textOf(waiting), /What to do: Create the DNS record shown below\./);
      const shown = await page
        .locator('[data-testid="status"], .badge, .banner-title, .reason-tag')
        .allInnerTexts();
      assert.ok(shown.length >= 3, shown.join(' | '));
      for (const text of shown) assert.doesNotMatch(text, /_/, `a code in "${text}"`);
    });

    it('shows when the next automatic check runs and when Re-verify becomes available', async () => {
      const next = card('lost.example.test').locator('[data-testid="next-check"] time');
      const lost = (await inspectDomain(p.ctx, owner, 'petstore', 'lost.example.test')).domain;
      assert.ok(lost.nextCheckAt);
      assert.equal(await next.getAttribute('datetime'), lost.nextCheckAt);
      assert.equal(lost.nextCheckAt, new Date(Date.parse(lost.lastCheckedAt ?? '') + 60_000).toISOString());

      await addDomain('api.example.test');
      await verify('api.example.test');
      await waitForStatus('api.example.test', 'Certificate being issued');
      const api = (await inspectDomain(p.ctx, owner, 'petstore', 'api.example.test')).domain;
      assert.ok(api.reverifyAvailableAt);
      const reverify = card('api.example.test').getByRole('button', { name: 'Re-verify' });
      assert.equal(await reverify.isDisabled(), true);
      const at = card('api.example.test').locator('[data-testid="reverify-at"]');
      assert.equal(await at.locator('time').getAttribute('datetime'), api.reverifyAvailableAt);
      assert.match(await textOf(at), /^Available from .+, if no certificate has come by then\.$/);
      assert.equal(await reverify.getAttribute('aria-describedby'), await at.getAttribute('id'));
      // Verified: re-checked every 6 hours.
      assert.equal(
        await card('api.example.test').locator('[data-testid="next-check"] time').getAttribute('datetime'),
        api.nextCheckAt,
      );
      assert.equal(Date.parse(api.nextCheckAt ?? '') - Date.parse(api.lastCheckedAt ?? ''), 6 * 3_600_000);
    });

    it('sets the primary domain and a 301 redirect from the form; the API and the edge follow', async () => {
      await addDomain('shop.example.test');
      await addDomain('www.example.test');
      await verify('shop.example.test');
      await verify('www.example.test');
      await waitForStatus('www.example.test', 'Certificate being issued');
      assert.deepEqual((await issueDue()).sort(), [
        'api.example.test',
        'shop.example.test',
        'www.example.test',
      ]);
      await waitForStatus('shop.example.test', 'Live');
      // Live: the records are in use, not to create.
      assert.equal(await textOf(card('shop.example.test').locator('.records h4')), 'DNS record in use');
      assert.doesNotMatch(await textOf(card('shop.example.test')), /to create/);

      const form = page.locator('form.settings-form');
      await form.getByLabel('Primary domain').selectOption('shop.example.test');
      // The primary serves: it cannot be made to redirect away.
      assert.equal(await form.getByLabel('shop.example.test', { exact: true }).isDisabled(), true);
      // A chain is refused before anything is sent: www → api → shop.
      await form.getByLabel('api.example.test', { exact: true }).selectOption('shop.example.test');
      await form.getByLabel('www.example.test', { exact: true }).selectOption('api.example.test');
      await form.getByRole('button', { name: 'Save primary and redirects' }).click();
      const alert = form.getByRole('alert');
      await expectText(
        alert,
        'www.example.test would redirect to api.example.test, which itself redirects to shop.example.test: point www.example.test straight at shop.example.test.',
      );
      assert.deepEqual(await readDomainConfig(p.ctx, owner, 'petstore').then((c) => c.primary), null);

      await form.getByLabel('api.example.test', { exact: true }).selectOption({ index: 0 });
      await form.getByLabel('www.example.test', { exact: true }).selectOption('shop.example.test');
      assert.equal(await form.getByLabel('Redirect status of www.example.test').inputValue(), '301');
      await form.getByRole('button', { name: 'Save primary and redirects' }).click();
      const wwwRole = card('www.example.test').locator('[data-testid="redirect"]');
      await expectText(wwwRole, 'Redirects to shop.example.test (301)');
      assert.equal(await textOf(card('shop.example.test').locator('[data-testid="primary"]')), 'Primary');
      assert.equal(
        await card('api.example.test').locator('[data-testid="primary"], [data-testid="redirect"]').count(),
        0,
      );
      assert.match(
        await textOf(card('shop.example.test').locator('.role-line')),
        /petstore\.platform\.test redirects its pages here \(308\)/,
      );

      // Written through the domain-config API: the export says the same, and so does the YAML view.
      const saved = await readDomainConfig(p.ctx, owner, 'petstore');
      assert.equal(saved.primary, 'shop.example.test');
      assert.deepEqual(saved.redirects, [{ from: 'www.example.test', to: 'shop.example.test', status: 301 }]);
      await page.locator('pre.yaml', { hasText: 'primary: shop.example.test' }).waitFor(WAIT);
      assert.equal(await textOf(page.locator('pre.yaml')), saved.yaml);

      // The edge serves it at once: www redirects with 301, the default address to the primary.
      const www = await requestAs(edge.httpPort, 'www.example.test', '/pets?limit=1');
      assert.equal(www.status, 301);
      assert.equal(www.headers.location, `https://shop.example.test:${edge.httpsPort}/pets?limit=1`);
      const home = await requestAs(edge.httpPort, DEFAULT_HOST, '/');
      assert.equal(home.status, 308);
      assert.equal(home.headers.location, `https://shop.example.test:${edge.httpsPort}/`);
      assert.deepEqual(await accessibilityViolations(page), []);
      await page.screenshot({ path: screenshotPath('domains-primary-1280'), fullPage: true });

      // After a reload the form shows what is saved.
      await page.reload();
      await waitForStatus('shop.example.test', 'Live');
      assert.equal(await form.getByLabel('Primary domain').inputValue(), 'shop.example.test');
      assert.equal(
        await form.getByLabel('www.example.test', { exact: true }).inputValue(),
        'shop.example.test',
      );
    });

    it('says a domain already added is in the list, without a CLI command', async () => {
      await page.getByLabel('Hostname').fill('shop.example.test');
      await page.getByRole('button', { name: 'Add domain' }).click();
      const alert = page.locator('#new-domain-error [role="alert"]');
      await expectText(
        alert,
        'shop.example.test is already a domain of this project: it is in the list below.',
      );
      assert.doesNotMatch(await textOf(page.locator('main')), /kennel domains inspect/);
    });

    it('does not wrap ALIAS or 3600 in the apex records at 1280 px, and counts the records in its words', async () => {
      await addDomain('example.test');
      const apex = card('example.test');
      assert.equal(await textOf(apex.locator('.records h4')), 'DNS records to create');
      assert.match(await textOf(apex.locator('.status-line')), /^Create the DNS records below/);
      assert.match(
        await textOf(card('lost.example.test').locator('.status-line')),
        /^Create the DNS record below/,
      );
      assert.equal(await textOf(card('lost.example.test').locator('.records h4')), 'DNS record to create');
      // One line box per word: the text's own rects (the code element may be a single flex item
      // box holding several lines, so its getClientRects would say 1 either way).
      const lines = (await page.evaluate(`[...document.querySelectorAll(
        'article.domain[data-hostname="example.test"] :is(code[data-field="type"], code[data-field="ttl"])',
      )].map((code) => {
        const range = document.createRange();
        range.selectNodeContents(code);
        return [code.textContent, range.getClientRects().length];
      })`)) as [string, number][];
      assert.deepEqual(lines, [
        ['ALIAS', 1],
        ['3600', 1],
        ['A', 1],
        ['3600', 1],
        ['TXT', 1],
        ['3600', 1],
      ]);
      assert.deepEqual(await accessibilityViolations(page), []);
      await page.screenshot({ path: screenshotPath('domains-1280'), fullPage: true });
    });

    it('fits a 390 px phone without sideways scrolling, axe clean', async () => {
      const phone = await chromium.newContext({
        viewport: { width: 390, height: 844 },
        isMobile: true,
        hasTouch: true,
      });
      const small = await phone.newPage();
      await signIn(small, base, 'owner@x.test', 'owner password 1');
      await small.goto(`${base}/projects/petstore/settings/domains`);
      await card('example.test', small).locator('[data-testid="status"]').waitFor(WAIT);
      const sideways = await overflow(small);
      assert.ok(sideways <= 0, `the page scrolls sideways by ${sideways} px`);
      assert.deepEqual(await accessibilityViolations(small), []);
      await small.screenshot({ path: screenshotPath('domains-390'), fullPage: true });
      await phone.close();
    });

    it('keeps a Free team from adding a domain, telling a member to ask a platform admin and an admin how to upgrade', async () => {
      const memberContext = await chromium.newContext();
      const member = await memberContext.newPage();
      await signIn(member, base, 'hobby@y.test', 'hobby password 1');
      await member.goto(`${base}/projects/hobby/settings/domains`);
      const note = member.locator('[data-testid="add-blocked"]');
      await note.waitFor(WAIT);
      assert.equal(await member.getByLabel('Hostname').isDisabled(), true);
      assert.equal(await member.getByRole('button', { name: 'Add domain' }).isDisabled(), true);
      const memberText = await textOf(note);
      assert.match(
        memberText,
        /only a platform admin can change a team’s plan\. Ask one to move the team to Pro/,
      );
      assert.equal(await note.getByRole('button').count(), 0);
      // Who can change it, and where the plan is shown: the team's Plan page.
      await note
        .getByText('You own team Hobby: ask whoever runs this Kennel (a platform admin) to move it to Pro.')
        .waitFor(WAIT);
      assert.equal(
        await note.getByRole('link', { name: 'Plan page' }).getAttribute('href'),
        `/teams/${hobbyTeamId}/settings`,
      );
      assert.deepEqual(await accessibilityViolations(member), []);

      const adminContext = await chromium.newContext();
      const admin = await adminContext.newPage();
      await signIn(admin, base, 'admin@x.test', 'admin password 1');
      await admin.goto(`${base}/projects/hobby/settings/domains`);
      const adminNote = admin.locator('[data-testid="add-blocked"]');
      await adminNote.waitFor(WAIT);
      assert.equal(await admin.getByLabel('Hostname').isDisabled(), true);
      const adminText = await textOf(adminNote);
      assert.doesNotMatch(adminText, /ask/i);
      assert.match(adminText, /As a platform admin you can change its plan here/);
      assert.equal(
        await adminNote.getByRole('link', { name: 'Plan page' }).getAttribute('href'),
        `/teams/${hobbyTeamId}/settings`,
      );
      assert.notEqual(adminText, memberText);
      assert.deepEqual(await accessibilityViolations(admin), []);
      // The admin moves the team to Pro from the page; the form opens.
      await adminNote.getByRole('button', { name: 'Move the team to Pro' }).click();
      await admin.locator('[data-testid="add-blocked"]').waitFor({ state: 'detached', ...WAIT });
      assert.equal(await admin.getByLabel('Hostname').isDisabled(), false);
      const team = await p.ctx.db
        .selectFrom('teams')
        .select('plan')
        .where('id', '=', hobbyTeamId)
        .executeTakeFirst();
      assert.equal(team?.plan, 'pro');
      // The member's page opens too once reloaded.
      await member.reload();
      await member.getByText('No custom domains yet').waitFor(WAIT);
      assert.equal(await member.getByLabel('Hostname').isDisabled(), false);
      await memberContext.close();
      await adminContext.close();
    });
  });
}
