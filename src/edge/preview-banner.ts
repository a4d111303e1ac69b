import type { IncomingMessage, ServerResponse } from 'node:http';
import { escapeHtml } from '../lib/html.ts';
import type { PlatformDb } from '../platform/context.ts';
import { type PreviewFacts, readPreviewFacts } from '../platform/previews/index.ts';
import { CompressedBody, REFERENCE_PAGE_CSP } from '../web/reference/index.ts';
import type { PublishedDocument } from './published-site.ts';

/**
 * The banner a preview's reference page opens with: which deploy it is, that it is not live, and
 * its changes against the live deploy (as stored when it was made) in a list that unfolds, so a
 * share-link holder, who has no dashboard, sees them too. Inline styles: the page's CSP allows
 * them, and the reference stylesheet stays the live sites'.
 */
export function renderPreviewBanner(facts: PreviewFacts): string {
  const state = facts.live ? 'now live (promoted)' : 'not live';
  const against = facts.liveNumber === null ? 'the live deploy' : `the live deploy #${facts.liveNumber}`;
  const count = facts.changes.length;
  const items = facts.changes
    .map(
      (c) =>
        `<li><strong>${escapeHtml(c.level)}</strong> ${c.operation ? `<code>${escapeHtml(c.operation)}</code> ` : ''}${escapeHtml(c.message)}</li>`,
    )
    .join('');
  const list =
    count === 0
      ? `No changes against ${against}.`
      : `<details><summary>${count} change${count === 1 ? '' : 's'} against ${against}</summary><ul style="margin:.5rem 0 0;padding-left:1.25rem">${items}</ul></details>`;
  return `<aside class="kennel-preview-banner" role="note" style="background:#fff4ce;color:#3b2f00;border-bottom:1px solid #e0c45c;padding:.6rem 1rem;font:14px/1.5 system-ui,sans-serif"><strong>Preview of deploy #${facts.number} — ${state}.</strong> ${list}</aside>`;
}

/** A preview deploy's reference page: the deploy's page with the banner after `<body>`. */
export class PreviewPages {
  readonly #db: PlatformDb;
  readonly #pages = new Map<string, Promise<CompressedBody>>();

  constructor(db: PlatformDb) {
    this.#db = db;
  }

  async send(
    req: IncomingMessage,
    res: ServerResponse,
    published: PublishedDocument,
    deployId: number,
    requestId: string,
  ): Promise<void> {
    const facts = await readPreviewFacts(this.#db, deployId);
    // Keyed by what the banner says: a promotion changes "not live" and the live deploy.
    const key = `${deployId} ${facts.live} ${facts.liveNumber}`;
    let page = this.#pages.get(key);
    if (!page) {
      if (this.#pages.size > 200) this.#pages.clear();
      page = this.#render(published, facts);
      this.#pages.set(key, page);
      page.catch(() => this.#pages.delete(key));
    }
    (await page).send(req, res, {
      'cache-control': 'no-cache',
      'content-security-policy': REFERENCE_PAGE_CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-robots-tag': 'noindex',
      'x-request-id': requestId,
    });
  }

  async #render(published: PublishedDocument, facts: PreviewFacts): Promise<CompressedBody> {
    const html = published.page.identity.toString('utf8');
    const body = html.indexOf('<body>');
    const at = body === -1 ? 0 : body + '<body>'.length;
    const page = new CompressedBody(
      'text/html; charset=utf-8',
      Buffer.from(`${html.slice(0, at)}\n${renderPreviewBanner(facts)}${html.slice(at)}`),
    );
    await page.compress();
    return page;
  }
}
