import assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';
import { accessibilityViolations } from './axe.ts';
import { screenshotPath } from './chromium.ts';

/** Small steps the dashboard's browser tests share (test/web/dashboard*.test.ts, team-onboarding). */

/** A locator's text as the DOM holds it ('' when it has none). */
export const textOf = async (locator: Locator) => (await locator.textContent()) ?? '';

/** The text as laid out (innerText: blocks and cells apart, closed details left out), spaces folded. */
export const laidOutText = async (locator: Locator) =>
  // biome-ignore lint/performance/useDomNodeTextContent: Playwright's locator, where the laid-out text is the point
  (await locator.innerText()).replace(/\s+/g, ' ').trim();

/** How far the page scrolls sideways, in pixels (0 or less when it fits). */
export const overflow = (page: Page) =>
  page.evaluate('document.documentElement.scrollWidth - window.innerWidth') as Promise<number>;

/**
 * Signs in with the dashboard's form at `base` and waits for the project list. Generous wait: a
 * sign-in hashes a password, on a machine other tests load too.
 */
export async function signIn(page: Page, base: string, email: string, password: string) {
  await page.goto(`${base}/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Projects' }).waitFor({ timeout: 60_000 });
}

/** A domain's card on a project's Domains page. */
export const domainCard = (page: Page, hostname: string) =>
  page.locator(`article.domain[data-hostname="${hostname}"]`);

/** Waits (up to 30 s) until a domain's card shows `label` as its status, in words. */
export const waitForDomainStatus = (page: Page, hostname: string, label: string) =>
  domainCard(page, hostname)
    .locator('[data-testid="status"]', { hasText: new RegExp(`^${label}$`) })
    .waitFor({ timeout: 30_000 });

/**
 * Records every failed request of `page` into `failures` (returned): "STATUS METHOD /path" for an
 * answer of 400 or more, "failed METHOD url" for one that never came.
 */
export function watchFailures(page: Page, failures: string[] = []): string[] {
  page.on('requestfailed', (request) => failures.push(`failed ${request.method()} ${request.url()}`));
  page.on('response', (response) => {
    if (response.status() >= 400) {
      failures.push(
        `${response.status()} ${response.request().method()} ${new URL(response.url()).pathname}`,
      );
    }
  });
  return failures;
}

/**
 * The page as it is at 1280 px and at 390 px: axe-clean at both, no sideways scrolling on the
 * phone, a screenshot of each (<name>-1280, <name>-390); back at 1280 afterwards.
 */
export async function checkBothWidths(page: Page, name: string) {
  await page.setViewportSize({ width: 1280, height: 900 });
  assert.deepEqual(await accessibilityViolations(page), [], `${name} at 1280 px`);
  await page.screenshot({ path: screenshotPath(`${name}-1280`), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  const sideways = await overflow(page);
  assert.ok(sideways <= 0, `${name} scrolls sideways by ${sideways} px at 390 px`);
  assert.deepEqual(await accessibilityViolations(page), [], `${name} at 390 px`);
  await page.screenshot({ path: screenshotPath(`${name}-390`), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
}
