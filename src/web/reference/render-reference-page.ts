import { escapeHtml } from '../../lib/html.ts';
import type { ReferenceAssets } from './reference-assets.ts';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/** JSON inside `<script type="application/json">`: `<` escaped so no string can close the element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

/**
 * The Content-Security-Policy of the reference page: everything from this site only. Styles allow
 * inline attributes because Swagger UI's React components set `style` on elements; images allow
 * `data:` for the icons its stylesheet embeds.
 */
export const REFERENCE_PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

type PathItems = Record<string, Record<string, Record<string, unknown>>>;

/** One operation as a list row; `target` is its path under `/api/`, or a webhook's name. */
function operationRow(method: string, target: string, op: Record<string, unknown>): string {
  const sunset = op['x-sunset'] ? ` — sunset ${escapeHtml(op['x-sunset'])}` : '';
  const badge = op.deprecated ? ` <span class="kennel-deprecated">deprecated${sunset}</span>` : '';
  return `<li><code>${escapeHtml(method.toUpperCase())} ${escapeHtml(target)}</code> ${escapeHtml(op.summary)}${badge}</li>`;
}

function operationsOf(items: PathItems): [string, string, Record<string, unknown>][] {
  return Object.entries(items).flatMap(([key, item]) =>
    Object.entries(item ?? {})
      .filter(([method, op]) => METHODS.includes(method) && op && typeof op === 'object')
      .map(([method, op]): [string, string, Record<string, unknown>] => [key, method, op]),
  );
}

/**
 * The operations by tag as plain HTML: what a browser without JavaScript (or a crawler) sees. An
 * OpenAPI 3.1 document's `webhooks` (requests the API sends, not receives) follow, under their own
 * heading and by name.
 */
function operationList(document: Record<string, unknown>): string {
  const byTag = new Map<string, string[]>();
  for (const [path, method, op] of operationsOf((document.paths ?? {}) as PathItems)) {
    const row = operationRow(method, `/api${path}`, op);
    for (const tag of (op.tags as string[] | undefined) ?? ['Operations']) {
      // Appended in place: copying the list for each row made 25,000 operations take seconds.
      const rows = byTag.get(tag);
      if (rows) rows.push(row);
      else byTag.set(tag, [row]);
    }
  }
  const operations = [...byTag].map(([tag, rows]) => `<h2>${escapeHtml(tag)}</h2><ul>${rows.join('')}</ul>`);
  const webhooks = operationsOf((document.webhooks ?? {}) as PathItems).map(([name, method, op]) =>
    operationRow(method, name, op),
  );
  if (webhooks.length > 0) operations.push(`<h2>Webhooks</h2><ul>${webhooks.join('')}</ul>`);
  return operations.join('');
}

/**
 * Whether the reference needs an Authorize control: the document declares a security scheme.
 * Swagger UI's own button sits below the document's description, which can be screens long;
 * the header's copy (shown by reference.js once Swagger UI runs) opens the same dialog.
 */
function declaresSecurity(document: Record<string, unknown>): boolean {
  const components = (document.components ?? {}) as { securitySchemes?: unknown };
  const schemes = components.securitySchemes;
  return typeof schemes === 'object' && schemes !== null && Object.keys(schemes).length > 0;
}

/**
 * A published site's front page: Swagger UI booted (by reference.js) with the deploy's document,
 * embedded so the page needs no second round trip for it. Rendered once per deploy.
 */
export function renderReferencePage(
  document: Record<string, unknown>,
  assets: Pick<ReferenceAssets, 'url'>,
): string {
  const info = (document.info ?? {}) as { title?: unknown; version?: unknown };
  const title = escapeHtml(info.title || 'API');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} — API reference</title>
<meta name="description" content="API reference of ${title}, with a console to test it.">
<link rel="icon" href="${assets.url('favicon.png')}">
<link rel="alternate" type="application/atom+xml" title="${title} changelog" href="/changelog.atom">
<link rel="stylesheet" href="${assets.url('swagger-ui.css')}">
<link rel="stylesheet" href="${assets.url('reference.css')}">
<script src="${assets.url('swagger-ui-bundle.js')}" defer></script>
<script src="${assets.url('reference.js')}" defer></script>
</head>
<body>
<a class="kennel-skip" href="#reference">Skip to the reference</a>
<header class="kennel-header">
<div class="kennel-header-inner">
<p class="kennel-brand">${title} <span class="kennel-version">${escapeHtml(info.version)}</span></p>
<div class="kennel-header-actions">
<nav aria-label="Site"><a href="/changelog">Changelog</a> <a href="/openapi.json">openapi.json</a> <a href="/openapi.yaml">openapi.yaml</a></nav>
${declaresSecurity(document) ? '<button type="button" class="kennel-authorize" hidden>Authorize</button>' : ''}
</div>
</div>
</header>
<main id="reference" tabindex="-1">
<div id="swagger-ui" aria-busy="true"></div>
<noscript><div class="kennel-fallback"><h1>${title}</h1><p>The API is served under <code>/api/</code>. The interactive reference needs JavaScript; the operations are:</p>${operationList(document)}</div></noscript>
</main>
<script type="application/json" id="kennel-openapi">${scriptJson(document)}</script>
</body>
</html>
`;
}
