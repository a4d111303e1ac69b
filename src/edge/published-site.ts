import { stringify } from 'yaml';
import type { PlatformDb } from '../platform/context.ts';

export interface PublishedDocument {
  readonly json: string;
  readonly yaml: string;
  readonly document: Record<string, unknown>;
  /** The reference page, rendered once per deploy. */
  readonly html: string;
}

/**
 * The deployed OpenAPI documents, by deploy id. Deploys are immutable, so an entry never goes
 * stale; a new deploy is a new id.
 */
export class DocumentCache {
  readonly #db: PlatformDb;
  readonly #entries = new Map<number, PublishedDocument>();

  constructor(db: PlatformDb) {
    this.#db = db;
  }

  async get(deployId: number): Promise<PublishedDocument | undefined> {
    const cached = this.#entries.get(deployId);
    if (cached) return cached;
    const row = await this.#db
      .selectFrom('deploys')
      .select('document')
      .where('id', '=', deployId)
      .executeTakeFirst();
    if (!row?.document) return undefined;
    const document = JSON.parse(row.document) as Record<string, unknown>;
    const entry = {
      document,
      html: referencePage(document),
      json: JSON.stringify(document, null, 2),
      yaml: stringify(document, { aliasDuplicateObjects: false, lineWidth: 0 }),
    };
    if (this.#entries.size > 1000) this.#entries.clear();
    this.#entries.set(deployId, entry);
    return entry;
  }
}

const escapeHtml = (text: unknown) =>
  String(text ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );

/**
 * The published site's front page: the API reference of the active deploy. A plain server-rendered
 * list of the operations by tag, deprecations with their sunset date; the interactive reference
 * (the dashboard issue) replaces it.
 */
export function referencePage(document: Record<string, unknown>): string {
  const info = (document.info ?? {}) as { title?: string; version?: string; description?: string };
  const paths = (document.paths ?? {}) as Record<string, Record<string, Record<string, unknown>>>;
  const byTag = new Map<string, string[]>();
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'put', 'post', 'delete', 'patch', 'head', 'options'].includes(method)) continue;
      const tags = (op.tags as string[] | undefined) ?? ['Operations'];
      const sunset = op['x-sunset'] ? ` — sunset ${escapeHtml(op['x-sunset'])}` : '';
      const badge = op.deprecated ? `<span class="deprecated">deprecated${sunset}</span>` : '';
      const row = `<li><code class="method">${escapeHtml(method.toUpperCase())}</code> <code>/api${escapeHtml(path)}</code> ${escapeHtml(op.summary)} ${badge}</li>`;
      for (const tag of tags) byTag.set(tag, [...(byTag.get(tag) ?? []), row]);
    }
  }
  const sections = [...byTag]
    .map(([tag, rows]) => `<section><h2>${escapeHtml(tag)}</h2><ul>${rows.join('')}</ul></section>`)
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(info.title)} — API reference</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d2433}
code{font:14px ui-monospace,monospace}.method{display:inline-block;min-width:4.5rem;font-weight:600}
li{list-style:none;padding:.25rem 0;border-bottom:1px solid #e5e7eb}.deprecated{color:#9a3412;font-size:.85rem}</style>
</head><body><h1>${escapeHtml(info.title)} <small>${escapeHtml(info.version)}</small></h1>
<p>The API is served under <code>/api/</code>. OpenAPI document: <a href="/openapi.json">openapi.json</a>, <a href="/openapi.yaml">openapi.yaml</a>.</p>
${sections}</body></html>`;
}
