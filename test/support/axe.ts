import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's WCAG 2.1 A/AA and best-practice rules on the page as it is now: the whole page, or
 * only the parts `include` selects (CSS selectors). Injected through the DevTools protocol, which
 * the page's CSP (script-src 'self') does not apply to.
 */
export async function accessibilityViolations(target: Page, include?: readonly string[]): Promise<unknown[]> {
  await target.evaluate(AXE);
  const scope = include ? JSON.stringify({ include: include.map((selector) => [selector]) }) : 'document';
  return (await target.evaluate(`axe.run(${scope}, {
    runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
  }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) })))`)) as unknown[];
}
