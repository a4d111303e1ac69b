import { escapeHtml } from '../../lib/html.ts';
import { swaggerUiOperationId } from '../changelog/operation-links.ts';
import type { ReferenceAssets } from './reference-assets.ts';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/** JSON inside `<script type="application/json">`: `<` escaped so no string can close the element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

/**
 * The Content-Security-Policy of the reference page: everything from this site only. Styles allow
 * inline attributes because Swagger UI's React components set `style` on elements; images allow
 * `data:` for the icons its stylesheet embeds and the page's own icon.
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

/**
 * The page's icon, in the page: a request and its headers fewer than the PNG it replaced (issue 28
 * keeps the Petstore's page at or under its bytes before the sidebar): a tile in the console's green.
 */
export const FAVICON =
  "data:image/svg+xml,<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'><rect width='16' height='16' rx='3' fill='%2349cc90'/></svg>";

type PathItems = Record<string, Record<string, Record<string, unknown>>>;

function operationsOf(items: PathItems): [string, string, Record<string, unknown>][] {
  return Object.entries(items).flatMap(([key, item]) =>
    Object.entries(item ?? {})
      .filter(([method, op]) => METHODS.includes(method) && op && typeof op === 'object')
      .map(([method, op]): [string, string, Record<string, unknown>] => [key, method, op]),
  );
}

/** Swagger UI's deep link of an operation filed under `tag` (see src/web/changelog/operation-links.ts). */
function deepLink(tag: string, path: string, method: string, op: Record<string, unknown>): string {
  return `#/${encodeURIComponent(tag)}/${encodeURIComponent(swaggerUiOperationId(op, path, method))}`;
}

/** One operation in the sidebar: method, path (as Swagger UI shows it), summary, deprecation. */
function sidebarEntry(method: string, path: string, op: Record<string, unknown>, href?: string): string {
  const sunset = op['x-sunset'] ? ` — sunset ${escapeHtml(op['x-sunset'])}` : '';
  const badge = op.deprecated ? ` <span class="kennel-deprecated">deprecated${sunset}</span>` : '';
  const inner =
    `<span class="kennel-method kennel-method-${escapeHtml(method)}">${escapeHtml(method.toUpperCase())}</span> ` +
    `<code class="kennel-path">${escapeHtml(path)}</code> <span class="kennel-summary">${escapeHtml(op.summary)}</span>${badge}`;
  return href ? `<li><a href="${escapeHtml(href)}">${inner}</a></li>` : `<li>${inner}</li>`;
}

/**
 * The sidebar's operations by tag, as plain HTML built here once per deploy: every operation
 * under each of its tags (`default` without one, as Swagger UI files it), linked to its deep link;
 * an OpenAPI 3.1 document's `webhooks` (requests the API sends) follow under their own heading.
 * A browser without JavaScript (or a crawler) sees the same list. reference.js filters it.
 */
function operationIndex(document: Record<string, unknown>): string {
  const byTag = new Map<string, string[]>();
  for (const [path, method, op] of operationsOf((document.paths ?? {}) as PathItems)) {
    const tags = Array.isArray(op.tags) && op.tags.length > 0 ? (op.tags as string[]) : ['default'];
    for (const tag of tags) {
      const row = sidebarEntry(method, path, op, deepLink(String(tag), path, method, op));
      // Appended in place: copying the list for each row made 25,000 operations take seconds.
      const rows = byTag.get(tag);
      if (rows) rows.push(row);
      else byTag.set(tag, [row]);
    }
  }
  const groups = [...byTag].map(
    ([tag, rows]) =>
      `<section class="kennel-tag"><h2>${escapeHtml(tag)}</h2><ul>${rows.join('')}</ul></section>`,
  );
  const webhooks = operationsOf((document.webhooks ?? {}) as PathItems).map(([name, method, op]) =>
    sidebarEntry(method, name, op),
  );
  if (webhooks.length > 0)
    groups.push(`<section class="kennel-tag"><h2>Webhooks</h2><ul>${webhooks.join('')}</ul></section>`);
  return groups.join('');
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
<link rel="icon" href="${FAVICON}">
<link rel="alternate" type="application/atom+xml" title="${title} changelog" href="/changelog.atom">
<link rel="stylesheet" href="${assets.url('reference-page.css')}">
<script src="${assets.url('swagger-ui-bundle.js')}" defer></script>
<script src="${assets.url('reference.js')}" defer></script>
</head>
<body>
<a class="kennel-skip" href="#reference">Skip to the reference</a>
<header class="kennel-header">
<h1 class="kennel-brand">${title} <span class="kennel-version">${escapeHtml(info.version)}</span></h1>
<nav aria-label="Site"><a href="/changelog">Changelog</a> <a href="/openapi.json">openapi.json</a> <a href="/openapi.yaml">openapi.yaml</a></nav>
${declaresSecurity(document) ? '<div class="kennel-auth" hidden><button type="button" class="kennel-authorize">Authorize</button> <label class="kennel-remember"><input type="checkbox" id="kennel-remember"> Remember my key on this device</label></div>' : ''}
</header>
<div class="kennel-layout">
<nav class="kennel-sidebar" aria-label="Operations">
<div class="kennel-search" role="search" hidden><label for="kennel-search">Search operations</label>
<input type="search" id="kennel-search" autocomplete="off" placeholder="Path, summary or description" aria-describedby="kennel-search-status">
<p id="kennel-search-status" class="kennel-search-status" aria-live="polite"></p></div>
<div class="kennel-operations">${operationIndex(document)}</div>
</nav>
<div id="reference" tabindex="-1">
<div id="swagger-ui" aria-busy="true"></div>
<noscript><p class="kennel-fallback">The API is served under <code>/api/</code>. The console needs JavaScript; the operations are listed beside.</p></noscript>
</div>
</div>
<script type="application/json" id="kennel-openapi">${scriptJson(document)}</script>
</body>
</html>
`;
}
