import { accessSync, constants, mkdirSync } from 'node:fs';
import { join } from 'node:path';
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
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args });
  return {
    browser,
    newContext: (contextOptions) =>
      browser.newContext({ viewport: { width: 1280, height: 900 }, ...contextOptions }),
    async close() {
      await browser.close().catch(() => {});
    },
  };
}
