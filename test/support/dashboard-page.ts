import assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';
import { accessibilityViolations } from './axe.ts';
import { screenshotPath } from './chromium.ts';

/** Small steps the dashboard's browser tests share (test/web/dashboard*.test.ts, team-onboarding). */

/**
 * How long a page may take to show what a step waits for. Generous: sign-ins, acceptances and
 * resets hash a password, on a machine other tests load too.
 */
export const WAIT = { timeout: 60_000 };

/** A locator's text as the DOM holds it ('' when it has none). */
export const textOf = async (locator: Locator) => (await locator.textContent()) ?? '';

/** The text as laid out (innerText: blocks and cells apart, closed details left out), spaces folded. */
export const laidOutText = async (locator: Locator) =>
  // biome-ignore lint/performance/useDomNodeTextContent: Playwright's locator, where the laid-out text is the point
  (await locator.innerText()).replace(/\s+/g, ' ').trim();

/**
 * Waits (up to 60 s) for `locator`, then checks its text, read by `read` (textContent unless
 * given): equal to `expected`, or matching it.
 */
export async function expectText(locator: Locator, expected: string | RegExp, read = textOf) {
  await locator.waitFor(WAIT);
  const text = await read(locator);
  if (typeof expected === 'string') assert.equal(text, expected);
  else assert.match(text, expected);
}

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

/** Console errors Chromium logs that say nothing new about the page (watchFailures). */
const NOT_THE_PAGES = [
  // Its echo of a request judged on its own, where an expected refusal or a cancellation is no failure.
  'Failed to load resource:',
  // The test's plain-HTTP address (http://platform.test) is no secure origin, so the header is not
  // applied; over HTTPS, or at localhost as `npm start` serves it, it is.
  "The Cross-Origin-Opener-Policy header has been ignored, because the URL's origin was untrustworthy.",
];

/** What `watchFailures` is told besides the page. */
export interface WatchOptions {
  /** Whose page it is, written before each record ("admin: …") where pages share one list. */
  readonly who?: string;
  /**
   * The refusals the test asks for, "STATUS METHOD /path" exactly: recorded in `refused` (for the
   * test to count) instead of in the failures.
   */
  readonly expected?: readonly string[];
  readonly refused?: string[];
}

/**
 * Records into `failures` (returned) whatever goes wrong on `page` that a user would meet: a
 * request answered with 400 or more ("STATUS METHOD /path"), one never answered ("failed METHOD
 * url"; not one the page cancelled), an error on the console, an uncaught error in the page.
 */
export function watchFailures(
  page: Page,
  failures: string[] = [],
  { who, expected = [], refused = [] }: WatchOptions = {},
): string[] {
  const record = (list: string[], what: string) => list.push(who === undefined ? what : `${who}: ${what}`);
  page.on('requestfailed', (request) => {
    // Cancelled by the page itself (a navigation leaving while the favicon or a fetch was under
    // way): nothing failed that a user sees. Refused connections, resets and timeouts count.
    if (request.failure()?.errorText === 'net::ERR_ABORTED') return;
    record(failures, `failed ${request.method()} ${request.url()}`);
  });
  page.on('response', (response) => {
    if (response.status() < 400) return;
    const answer = `${response.status()} ${response.request().method()} ${new URL(response.url()).pathname}`;
    record(expected.includes(answer) ? refused : failures, answer);
  });
  page.on('console', (message) => {
    const text = message.text();
    if (message.type() !== 'error' || NOT_THE_PAGES.some((start) => text.startsWith(start))) return;
    record(failures, `console error ${text} (${message.location().url})`);
  });
  page.on('pageerror', (error) => record(failures, `page error ${error.message}`));
  return failures;
}

/**
 * The page as it is at 1280 px and at 390 px: axe-clean at both, no sideways scrolling on the
 * phone, a screenshot of each (<name>-1280, <name>-390); back at `own` (1280) afterwards.
 */
export async function checkBothWidths(page: Page, name: string, own = { width: 1280, height: 900 }) {
  await page.setViewportSize({ width: 1280, height: 900 });
  assert.deepEqual(await accessibilityViolations(page), [], `${name} at 1280 px`);
  await page.screenshot({ path: screenshotPath(`${name}-1280`), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  const sideways = await overflow(page);
  assert.ok(sideways <= 0, `${name} scrolls sideways by ${sideways} px at 390 px`);
  assert.deepEqual(await accessibilityViolations(page), [], `${name} at 390 px`);
  await page.screenshot({ path: screenshotPath(`${name}-390`), fullPage: true });
  await page.setViewportSize(own);
}

/**
 * On a project's Settings page: renames the project with the form, waits for the form's "Saved"
 * status, and checks the page's heading shows the new name.
 */
export async function renameProject(page: Page, name: string) {
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByRole('button', { name: 'Save name' }).click();
  await page
    .locator('#rename-form [role="status"]')
    .getByText(`Saved. The project is now called ${name}.`)
    .waitFor(WAIT);
  assert.equal(await textOf(page.locator('h1')), name);
}

/**
 * The invitation page once it has loaded ("Join a team on Kennel"): the texts of its `fields`
 * (test ids without the `invitation-` prefix: team, inviter, email, role), in order.
 */
export async function invitationShows(page: Page, fields: readonly string[]) {
  await page.getByRole('heading', { level: 1, name: 'Join a team on Kennel' }).waitFor(WAIT);
  await page.getByTestId('invitation-team').waitFor(WAIT);
  const texts: string[] = [];
  for (const field of fields) texts.push(await textOf(page.getByTestId(`invitation-${field}`)));
  return texts;
}

/**
 * On a project's Settings page: sets the origin field `origin` to `url` and saves it, waits for
 * the form's "Saved" status naming `saved` (the origin as stored), and checks the field is valid.
 */
export async function saveOrigin(page: Page, origin: Locator, url: string, saved: string) {
  await origin.fill(url);
  await page.getByRole('button', { name: 'Save origin' }).click();
  await page
    .locator('#origin-form [role="status"]')
    .getByText(`Saved. Requests to the API now go to ${saved}.`)
    .waitFor(WAIT);
  assert.equal(await origin.getAttribute('aria-invalid'), null);
}
