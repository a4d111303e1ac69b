import type { Locator, Page } from 'playwright-core';

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
