import { accessSync, constants, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after } from 'node:test';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';

/**
 * Debian's Chromium driven by playwright-core (see TESTING.md, "Browser"). The machine has no
 * internet: Chromium's background services are switched off so it never tries to reach Google, and
 * test hostnames are mapped to loopback with --host-resolver-rules instead of DNS. Playwright gives
 * every launch a new empty profile of its own.
 */

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const INSTALL_HINT = 'apt-get install -y chromium (.ci/run installs it)';

/** Where tests save screenshots: ignored by git (see docs/getting-started.md, "Screenshots"). */
export const SCREENSHOT_DIR = join(import.meta.dirname, '..', '..', 'artifacts', 'screenshots');

export interface LaunchOptions {
  /** Hostname patterns mapped to 127.0.0.1, e.g. `['*.localhost', '*.example.test']`. */
  readonly mapToLoopback?: readonly string[];
  /** SPKI sha256 (base64) of certificates Chromium should accept although no root it knows signed them. */
  readonly trustSpki?: readonly string[];
}

export interface TestBrowser {
  readonly browser: Browser;
  /** A fresh context (cookies, storage) with a desktop viewport unless told otherwise. */
  newContext(options?: Parameters<Browser['newContext']>[0]): Promise<BrowserContext>;
  close(): Promise<void>;
}

export function screenshotPath(name: string): string {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return join(SCREENSHOT_DIR, `${name}.png`);
}

export async function launchChromium(options: LaunchOptions = {}): Promise<TestBrowser> {
  try {
    accessSync(CHROMIUM, constants.X_OK);
  } catch {
    throw new Error(`Chromium is not installed at ${CHROMIUM}: ${INSTALL_HINT}`);
  }
  const rules = (options.mapToLoopback ?? []).map((pattern) => `MAP ${pattern} 127.0.0.1`);
  const args = [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ];
  if (rules.length > 0) args.push(`--host-resolver-rules=${rules.join(', ')}`);
  if (options.trustSpki && options.trustSpki.length > 0)
    args.push(`--ignore-certificate-errors-spki-list=${options.trustSpki.join(',')}`);
  const browser = await launch(args);
  const opened: BrowserContext[] = [];
  return {
    browser,
    async newContext(contextOptions) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...contextOptions });
      opened.push(context);
      return context;
    },
    async close() {
      if (!SHARED) {
        await browser.close().catch(() => {});
        return;
      }
      // Shared: the contexts this launch opened go, the browser stays for the file's next suite.
      await Promise.all(opened.splice(0).map((context) => context.close().catch(() => {})));
    },
  };
}

/**
 * Under the test runner, one Chromium per test file and set of flags: a file's suites (one per
 * dialect, usually) each launched their own, and a launch costs far more than a context. Each
 * `close()` closes the contexts opened through that launch (each context is a fresh profile: cookies and
 * storage are not shared), and the browser itself closes when the file's tests are done. A
 * browser that has gone (crashed, or closed by its user) is launched again. Elsewhere (the
 * benchmarks) every launch is its own.
 */
const SHARED = process.env.NODE_TEST_CONTEXT !== undefined;
const browsers = new Map<string, Promise<Browser>>();
if (SHARED)
  after(async () => {
    for (const browser of browsers.values())
      await (await browser.catch(() => undefined))?.close().catch(() => {});
  });

async function launch(args: string[]): Promise<Browser> {
  const start = () => chromium.launch({ executablePath: CHROMIUM, headless: true, args });
  if (!SHARED) return start();
  const key = args.join('\n');
  const known = await browsers.get(key)?.catch(() => undefined);
  if (known?.isConnected()) return known;
  const launched = start();
  browsers.set(key, launched);
  return launched;
}
