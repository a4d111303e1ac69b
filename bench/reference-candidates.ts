import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { petstoreDocument } from '../src/petstore/index.ts';
import { launchChromium } from '../test/support/chromium.ts';
import { TEST_DEPRECATION } from '../test/support/petstore.ts';
import {
  CANDIDATES,
  type Candidate,
  candidateVersion,
  installRenderers,
  serveCandidates,
} from './reference-candidates-site.ts';
import { githubDocument, serveReference } from './reference-large.ts';
import type { BenchConfig } from './support/config.ts';
import { median, type Suite, type SuiteReport, type Table } from './support/report.ts';

/**
 * Issue 28's comparison: the reference renderers it names (Swagger UI, Scalar, Stoplight Elements,
 * Redoc, RapiDoc) and Kennel's own, loaded cold in one headless Chromium at 1280×800, in turn, the
 * same number of times, on GitHub's REST description (~1,100 operations) and on the Petstore.
 * Every page and file comes from a loopback site (reference-candidates-site.ts; Kennel's page as
 * reference-large.ts serves it), compressed as Kennel serves its own.
 *
 * - interactive: from navigation start until the first operation is shown in the main pane
 *   (checked every frame, so a busy main thread delays it) and the main thread is free: the end of
 *   the last long task (≥ 50 ms) before a quiet window of QUIET_MS. Every renderer, Kennel's
 *   included, is timed this way; Kennel's own mark (`kennel-reference-ready`) is printed beside.
 * - JS+CSS: bytes on the wire (compressed, headers included) of the scripts and stylesheets.
 * - search: from the input event (or the Enter that submits the filter) to the first frame whose
 *   list of matches differs from the one before, for each query; renderers without a search: "—".
 * - Petstore page: every byte of a cold load of the Petstore's page (page, files, document).
 */

const ROUNDS_DEFAULT = 3;
const QUIET_MS = 2_000;
const LOAD_TIMEOUT_MS = 120_000;
const SEARCH_QUERIES = ['repos', 'workflow runs'];
/**
 * Every load's browser context. The driver's checks are page-side expressions, which Kennel's CSP
 * (`script-src 'self'`, no eval) would refuse; bypassing it changes nothing the page does.
 */
const CONTEXT = { viewport: { width: 1280, height: 800 }, bypassCSP: true };
/** A search slower than this counts as no answer. */
const SEARCH_TIMEOUT_MS = 30_000;

/** How to drive one renderer in the page. Expressions run in the page; `deep(sel)` sees into shadow roots. */
export interface Driver {
  readonly id: string;
  readonly label: string;
  readonly version: string;
  /** True once the first operation is in the main pane (or, for Elements, its table of contents). */
  readonly ready: string;
  /** The search box (Playwright selector; CSS pierces open shadow roots), if there is one. */
  readonly searchBox?: string;
  /** A control to press first to open the search (Scalar's dialog). */
  readonly openSearch?: string;
  /** The search runs on Enter, not as one types (RapiDoc's filter). */
  readonly searchOnEnter?: boolean;
  /** The matches shown, as a string to compare before and after. */
  readonly matches?: string;
  /** Can the seed's rules be kept: sunset shown, no console on x-hideTryItPanel operations. */
  readonly rules: string;
}

/** Helpers defined in every page before its scripts run. */
const INIT = `(() => {
  window.__longTasks = [];
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push(e.startTime + e.duration);
    }).observe({ type: 'longtask', buffered: true });
  } catch {}
  window.deep = (selector, root = document) => {
    const found = [...root.querySelectorAll(selector)];
    for (const el of root.querySelectorAll('*')) if (el.shadowRoot) found.push(...window.deep(selector, el.shadowRoot));
    return found;
  };
  window.visible = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  window.__inputAt = 0;
  addEventListener('input', (e) => { window.__inputAt = e.timeStamp; }, true);
  addEventListener('keydown', (e) => { if (e.key === 'Enter') window.__inputAt = e.timeStamp; }, true);
})();`;

export const KENNEL: Driver = {
  id: 'kennel',
  label: "Kennel's (Swagger UI + sidebar)",
  version: 'this checkout',
  // A large document's tags start folded (reference.js): the first operation is the first tag's row.
  ready: `document.documentElement.dataset.referenceReady === 'true' && [...document.querySelectorAll('#swagger-ui .opblock, #swagger-ui .opblock-tag')].some(visible)`,
  searchBox: '#kennel-search',
  matches: `document.querySelectorAll('.kennel-operations li:not([hidden])').length + '/' + (document.getElementById('kennel-search-status') || {}).textContent`,
  rules:
    'yes: its plugin shows the sunset and drops the console on x-hideTryItPanel (test/web/reference.test.ts)',
};

const DRIVERS: Record<string, Omit<Driver, 'id' | 'label' | 'version'>> = {
  'swagger-ui': {
    ready: `!!document.querySelector('.opblock')`,
    searchBox: '.operation-filter-input',
    matches: `[...document.querySelectorAll('.opblock-tag-section')].length + ''`,
    rules:
      "with a plugin (Kennel's is one): no sunset or per-operation console switch of its own; filter matches tag names only",
  },
  scalar: {
    ready: `[...document.querySelectorAll('[id*="/tag/"][id*="/GET/"],[id*="/tag/"][id*="/POST/"]')].some(visible)`,
    openSearch: 'button:has-text("Open Search")',
    searchBox: '[role="dialog"] input',
    matches: `[...document.querySelectorAll('[role="dialog"] [role="option"], [role="dialog"] li')].map(e => e.textContent).join('|')`,
    rules:
      'no: x-sunset not shown (only in a description); the console (and "Ask AI") is on for every operation, hidden only all at once; fetches fonts from its CDN unless withDefaultFonts: false',
  },
  elements: {
    ready: `[...document.querySelectorAll('[id^="sl-toc-"]')].some(visible)`,
    rules:
      'console off per operation with x-hideTryItPanel (its own extension); x-sunset not shown; one operation per page, no search',
  },
  redoc: {
    ready: `[...document.querySelectorAll('[id^="tag/"][id*="/operation/"], [id^="operation/"]')].some(visible)`,
    searchBox: '.search-input',
    matches: `[...document.querySelectorAll('[data-role="search:results"] li')].length + ''`,
    rules:
      'no console at all (open-source Redoc: "Try it" is Redocly\'s paid product); shows x-sunset only as an unknown extension when showExtensions is on',
  },
  rapidoc: {
    ready: `deep('.expanded-endpoint-body, .m-endpoint').some(visible)`,
    searchBox: '#nav-bar-search',
    searchOnEnter: true,
    matches: `deep('.nav-bar-path').filter(visible).length + ''`,
    rules: 'x-sunset shown (as an extension); console ("Try") on for all or none, no per-operation switch',
  },
};

export function driverOf(candidate: Candidate): Driver {
  const driver = DRIVERS[candidate.id];
  if (!driver) throw new Error(`no driver for ${candidate.id}`);
  return { id: candidate.id, label: candidate.label, version: candidateVersion(candidate), ...driver };
}

interface Load {
  interactiveMs: number;
  /** When the first operation showed, before waiting for the main thread to be free. */
  firstOperationMs: number;
  /** Kennel's own `kennel-reference-ready` mark (Kennel only). */
  markMs?: number;
  scriptBytes: number;
  totalBytes: number;
  requests: number;
  /** Requests that failed (e.g. a font from a CDN the machine cannot reach). */
  failed: number;
  /** Per SEARCH_QUERIES; null when the renderer has no search or it did not answer. */
  searchMs: (number | null)[];
}

async function recordBytes(cdp: CDPSession) {
  const types = new Map<string, string>();
  const totals = { script: 0, total: 0, requests: 0, failed: 0 };
  await cdp.send('Network.enable');
  cdp.on('Network.responseReceived', (e: { requestId: string; type: string }) =>
    types.set(e.requestId, e.type),
  );
  cdp.on('Network.loadingFinished', (e: { requestId: string; encodedDataLength: number }) => {
    totals.total += e.encodedDataLength;
    totals.requests += 1;
    const type = types.get(e.requestId);
    if (type === 'Script' || type === 'Stylesheet') totals.script += e.encodedDataLength;
  });
  cdp.on('Network.loadingFailed', () => {
    totals.failed += 1;
  });
  return totals;
}

async function waitForQuiet(page: Page, from: number): Promise<number> {
  for (;;) {
    const [now, last] = await page.evaluate<[number, number]>(
      '[performance.now(), Math.max(0, ...window.__longTasks)]',
    );
    if (now - Math.max(from, last) >= QUIET_MS || now > LOAD_TIMEOUT_MS) return Math.max(from, last);
    await page.waitForTimeout(250);
  }
}

async function search(page: Page, driver: Driver, query: string): Promise<number | null> {
  if (!driver.searchBox || !driver.matches) return null;
  const box = page.locator(driver.searchBox).first();
  if (!(await box.isVisible())) {
    if (driver.openSearch) await page.locator(driver.openSearch).first().click();
    await box.waitFor({ timeout: 10_000 });
  }
  const before = await page.evaluate<string>(driver.matches);
  await box.fill(query);
  if (driver.searchOnEnter) await box.press('Enter');
  try {
    const handle = await page.waitForFunction(
      `(() => { const now = ${driver.matches}; return now !== ${JSON.stringify(before)} ? performance.now() : 0; })()`,
      undefined,
      { polling: 'raf', timeout: SEARCH_TIMEOUT_MS },
    );
    const doneAt = (await handle.jsonValue()) as number;
    return doneAt - (await page.evaluate<number>('window.__inputAt'));
  } catch {
    return null;
  }
}

export async function measure(
  context: BrowserContext,
  url: string,
  driver: Driver,
  searches: boolean,
): Promise<Load> {
  const page = await context.newPage();
  await page.addInitScript(INIT);
  const bytes = await recordBytes(await context.newCDPSession(page));
  await page.goto(url, { waitUntil: 'load', timeout: LOAD_TIMEOUT_MS });
  let firstOperationMs: number;
  try {
    const ready = await page.waitForFunction(`(${driver.ready}) ? performance.now() : 0`, undefined, {
      polling: 'raf',
      timeout: LOAD_TIMEOUT_MS,
    });
    firstOperationMs = (await ready.jsonValue()) as number;
  } catch (error) {
    if ((error as Error).name !== 'TimeoutError') throw error;
    // Not interactive within the limit: a figure ("> 120 s"), not a failed measurement.
    await page.close();
    const never = Number.POSITIVE_INFINITY;
    return {
      interactiveMs: never,
      firstOperationMs: never,
      scriptBytes: bytes.script,
      totalBytes: bytes.total,
      requests: bytes.requests,
      failed: bytes.failed,
      searchMs: searches ? SEARCH_QUERIES.map(() => null) : [],
    };
  }
  const interactiveMs = await waitForQuiet(page, firstOperationMs);
  const markMs =
    driver.id === 'kennel'
      ? await page.evaluate<number>("performance.getEntriesByName('kennel-reference-ready')[0].startTime")
      : undefined;
  const load = { ...bytes };
  const searchMs: (number | null)[] = [];
  // A search that cannot be driven (its control never actionable) is "no answer", not a lost load.
  if (searches)
    for (const query of SEARCH_QUERIES) searchMs.push(await search(page, driver, query).catch(() => null));
  await page.close();
  return {
    interactiveMs,
    firstOperationMs,
    markMs,
    scriptBytes: load.script,
    totalBytes: load.total,
    requests: load.requests,
    failed: load.failed,
    searchMs,
  };
}

interface Result {
  driver: Driver;
  github: Load[];
  petstore: Load[];
}

export async function runCandidatesBenchmark(options: {
  rounds: number;
  log: (line: string) => void;
}): Promise<{ results: Result[]; problems: string[] }> {
  const { log } = options;
  installRenderers(log);
  const drivers = [KENNEL, ...CANDIDATES.map(driverOf)];
  const github = githubDocument();
  const petstore = petstoreDocument(TEST_DEPRECATION) as Record<string, unknown>;
  log("serving the documents (GitHub's is 13 MB: compressed once per site)");
  const sites = {
    github: { kennel: await serveReference(github), others: await serveCandidates(github) },
    petstore: { kennel: await serveReference(petstore), others: await serveCandidates(petstore) },
  };
  const urlOf = (site: 'github' | 'petstore', driver: Driver) =>
    driver.id === 'kennel' ? sites[site].kennel.url : `${sites[site].others.url}/${driver.id}/`;
  const chromium = await launchChromium();
  const problems: string[] = [];
  const results: Result[] = drivers.map((driver) => ({ driver, github: [], petstore: [] }));
  try {
    // One unmeasured load of each: Chromium's start-up, and the site compresses what was asked for.
    const warmup = await chromium.newContext(CONTEXT);
    const asked = new Set<string>();
    warmup.on('request', (request) => asked.add(new URL(request.url()).pathname));
    for (const driver of drivers) {
      log(`warm-up load: ${driver.id}`);
      const page = await warmup.newPage();
      await page.addInitScript(INIT);
      await page.goto(urlOf('petstore', driver), { waitUntil: 'load' });
      await page.waitForFunction(driver.ready, undefined, { polling: 'raf', timeout: LOAD_TIMEOUT_MS });
      await page.close();
    }
    await warmup.close();
    log('compressing the files asked for (Brotli 11, as Kennel compresses its own)');
    await sites.github.others.warm([...asked]);
    log('files compressed; measuring');
    for (let round = 0; round < options.rounds; round += 1) {
      for (const result of results) {
        for (const site of ['github', 'petstore'] as const) {
          const context = await chromium.newContext(CONTEXT);
          try {
            result[site].push(
              await measure(context, urlOf(site, result.driver), result.driver, site === 'github'),
            );
          } catch (error) {
            problems.push(
              `${result.driver.label} on ${site}, round ${round + 1}: ${(error as Error).message}`,
            );
          } finally {
            await context.close();
          }
        }
        const last = result.github.at(-1);
        if (last)
          log(
            `round ${round + 1} ${result.driver.id}: interactive ${last.interactiveMs.toFixed(0)} ms ` +
              `(first operation ${last.firstOperationMs.toFixed(0)} ms), JS+CSS ${last.scriptBytes} B, ` +
              `search ${last.searchMs.map((ms) => (ms === null ? '—' : ms.toFixed(1))).join('/')} ms, ` +
              `Petstore ${result.petstore.at(-1)?.totalBytes ?? '?'} B`,
          );
      }
    }
    return { results, problems };
  } finally {
    await chromium.close();
    for (const site of Object.values(sites)) {
      site.kennel.close();
      site.others.close();
    }
  }
}

const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`;
const ms = (value: number) =>
  Number.isFinite(value) ? `${value.toFixed(0)} ms` : `> ${LOAD_TIMEOUT_MS / 1000} s`;
const ratio = (value: number, base: number) =>
  Number.isFinite(value / base) ? `${(value / base).toFixed(2)}×` : '—';

function tables(results: Result[]): { main: Table; rules: Table } {
  const base = results[0] as Result;
  const med = (loads: Load[], pick: (l: Load) => number) => median(loads.map(pick));
  const baseInteractive = med(base.github, (l) => l.interactiveMs);
  const baseScript = med(base.github, (l) => l.scriptBytes);
  const basePetstore = med(base.petstore, (l) => l.totalBytes);
  const searchOf = (loads: Load[]) => {
    const each = loads.map((l) => l.searchMs);
    if (each.length === 0 || each.some((s) => s.some((v) => v === null))) return null;
    return median(each.map((s) => Math.max(...(s as number[]))));
  };
  const baseSearch = searchOf(base.github);
  return {
    main: {
      headers: [
        'renderer',
        'version',
        'interactive',
        '× Kennel',
        'first operation',
        'JS+CSS',
        '× Kennel',
        'search (slowest)',
        'failed requests',
        'Petstore page',
        '× Kennel',
      ],
      right: [2, 3, 4, 5, 6, 7, 8, 9, 10],
      rows: results.map((r) => {
        if (r.github.length === 0)
          return [r.driver.label, r.driver.version, 'failed', '', '', '', '', '', '', '', ''];
        const interactive = med(r.github, (l) => l.interactiveMs);
        const script = med(r.github, (l) => l.scriptBytes);
        const petstoreBytes = r.petstore.length > 0 ? med(r.petstore, (l) => l.totalBytes) : Number.NaN;
        const searchMs = searchOf(r.github);
        return [
          r.driver.label,
          r.driver.version,
          ms(interactive),
          ratio(interactive, baseInteractive),
          ms(med(r.github, (l) => l.firstOperationMs)),
          kb(script),
          ratio(script, baseScript),
          searchMs === null
            ? r.driver.searchBox
              ? `> ${SEARCH_TIMEOUT_MS / 1000} s`
              : '—'
            : `${searchMs.toFixed(1)} ms${baseSearch && r !== base ? ` (${ratio(searchMs, baseSearch)})` : ''}`,
          String(median(r.github.map((l) => l.failed))),
          kb(petstoreBytes),
          ratio(petstoreBytes, basePetstore),
        ];
      }),
    },
    rules: {
      headers: ['renderer', "the seed's rules (sunset shown; no console where x-hideTryItPanel)"],
      rows: results.map((r) => [r.driver.label, r.driver.rules]),
    },
  };
}

/** For bench/run.ts: `npm run bench -- reference-candidates`. */
export const referenceCandidatesSuite: Suite = {
  name: 'reference-candidates',
  onlyWhenNamed: true,
  description:
    "issue 28's reference renderers on GitHub's description and the Petstore, Kennel's as the baseline",
  async run(config: BenchConfig, log: (line: string) => void): Promise<SuiteReport> {
    const rounds = Math.max(1, Math.min(config.rounds, ROUNDS_DEFAULT));
    const { results, problems } = await runCandidatesBenchmark({ rounds, log });
    const { main, rules } = tables(results);
    const kennel = results[0] as Result;
    const marks = kennel.github.map((l) => l.markMs ?? Number.NaN);
    return {
      suite: 'reference-candidates',
      title: `Reference renderers on GitHub's REST description (~1,100 operations), 1280×800, medians of ${rounds} cold loads each, one Chromium, same run`,
      table: main,
      moreTables: [{ title: "The seed's rules, per renderer", table: rules }],
      checks: [
        {
          label: `Kennel's own mark on the same loads (kennel-reference-ready, median)`,
          passed: true,
          measured: ms(median(marks)),
        },
      ],
      problems,
      warnings: [],
      data: results.map((r) => ({ ...r, driver: { id: r.driver.id, version: r.driver.version } })),
    };
  },
};
