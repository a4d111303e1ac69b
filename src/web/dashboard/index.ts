import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * The dashboard: plain browser ES modules and CSS from ./public, served by the control plane at the
 * platform's own address (docs/decisions/dashboard.md, "Dashboard"). The files are read once at start, so a
 * request never touches the disk. Assets live under /assets/<content hash>/ and are cached for a
 * year (a new version has a new address); the page itself is revalidated on every load.
 */

const PUBLIC_DIR = join(import.meta.dirname, 'public');

const uplot = dirname(createRequire(import.meta.url).resolve('uplot/package.json'));

/**
 * Libraries served among the dashboard's assets from node_modules (nothing loads from elsewhere),
 * by the name the page imports them with. uPlot draws the Traffic tab's charts (docs/decisions/traffic.md,
 * "Traffic charts"): its minified build defines `var uPlot`, so one line makes it an ES module.
 */
const LIBRARIES: Record<string, () => Buffer> = {
  'uplot.js': () =>
    Buffer.concat([
      readFileSync(join(uplot, 'dist/uPlot.iife.min.js')),
      Buffer.from('\nexport default uPlot;\n'),
    ]),
  'uplot.css': () => readFileSync(join(uplot, 'dist/uPlot.min.css')),
};

/** Client-side routes: each answers the same page, which routes in the browser. */
export const DASHBOARD_ROUTES = [
  '/',
  '/sign-in',
  '/sign-up',
  '/invitations/accept',
  '/reset-password',
  '/forgot-password',
  '/account',
  '/teams',
  '/teams/new',
  '/teams/:teamId/people',
  '/projects/:slug',
  '/projects/:slug/deploys',
  '/projects/:slug/traffic',
  '/projects/:slug/settings/domains',
  '/projects/:slug/settings/cors',
  '/projects/:slug/settings',
  '/new',
  '/teams/:teamId/settings',
] as const;

/** Only this origin: no inline script or style, no framing, forms post here. */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.html': 'text/html; charset=utf-8',
};

interface Asset {
  readonly type: string;
  readonly body: Buffer;
  readonly gzip: Buffer;
  readonly etag: string;
}

function asset(type: string, body: Buffer): Asset {
  return {
    type,
    body,
    gzip: gzipSync(body, { level: 9 }),
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
  };
}

const SECURITY_HEADERS = {
  'content-security-policy': DASHBOARD_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
};

/** Sends a file; a 200 carries its ETag (and answers 304 to a match), any other status none. */
function send(request: FastifyRequest, reply: FastifyReply, file: Asset, cacheControl: string, status = 200) {
  reply.code(status).headers({
    ...SECURITY_HEADERS,
    'content-type': file.type,
    'cache-control': cacheControl,
    ...(status === 200 && { etag: file.etag }),
    // The 404 page goes to browsers only: the answer depends on Accept as well.
    vary: status === 200 ? 'accept-encoding' : 'accept, accept-encoding',
  });
  if (status === 200 && request.headers['if-none-match'] === file.etag) return reply.code(304).send();
  if (/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) {
    return reply.header('content-encoding', 'gzip').send(file.gzip);
  }
  return reply.send(file.body);
}

export interface DashboardFiles {
  /** The content hash in asset addresses. */
  readonly version: string;
  readonly page: Asset;
  /** The 404 page a browser gets for an address that is no page (not-found.html). */
  readonly notFound: Asset;
  readonly assets: ReadonlyMap<string, Asset>;
}

/** The lines of index.html that open and close what belongs to the app (its scripts and styles). */
const APP_MARKER = / *<!-- \/?app\b.*-->\n/g;
const APP_PART = / *<!-- app\b.*-->\n[\s\S]*?<!-- \/app -->\n/g;

/**
 * The 404 page: the dashboard's page (index.html, the one shell) without the app, which would
 * route the address itself, and with not-found.html's title and the rest of it as what <main> holds.
 */
function notFoundPage(shell: string, fragment: string): string {
  const [title = '', ...main] = fragment.split('\n');
  return shell
    .replace(APP_PART, '')
    .replace(/<title>.*<\/title>/, title)
    .replace(/(<main[^>]*>\n)[\s\S]*?( *<\/main>)/, (_, open, close) => `${open}${main.join('\n')}${close}`);
}

export function loadDashboard(dir = PUBLIC_DIR): DashboardFiles {
  const names = readdirSync(dir)
    .filter((n) => extname(n) !== '.html' && TYPES[extname(n)] !== undefined)
    .sort();
  const hash = createHash('sha256');
  const bodies = new Map<string, Buffer>();
  for (const name of names) {
    const body = readFileSync(join(dir, name));
    bodies.set(name, body);
    hash.update(name).update('\0').update(body);
  }
  for (const [name, read] of Object.entries(LIBRARIES)) {
    const body = read();
    bodies.set(name, body);
    hash.update(name).update('\0').update(body);
  }
  const version = hash.digest('hex').slice(0, 12);
  const read = (name: string) =>
    readFileSync(join(dir, name), 'utf8').replaceAll('%ASSETS%', `/assets/${version}`);
  const html = (text: string) => asset(TYPES['.html'] as string, Buffer.from(text));
  const shell = read('index.html');
  return {
    version,
    page: html(shell.replaceAll(APP_MARKER, '')),
    notFound: html(notFoundPage(shell, read('not-found.html'))),
    assets: new Map([...bodies].map(([name, body]) => [name, asset(TYPES[extname(name)] as string, body)])),
  };
}

let loaded: DashboardFiles | undefined;

/**
 * A browser asking for an address that is no page (GET or HEAD, accepting HTML, outside the API
 * and the assets) gets the dashboard's 404 page with a link home; anything else is left to the
 * API's route_not_found Error body. Pass it to installErrorHandling as `notFoundPage`.
 */
export function dashboardNotFound(given?: DashboardFiles) {
  return (request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return undefined;
    const path = request.url.split('?')[0] ?? '/';
    if (path.startsWith('/api/') || path.startsWith('/assets/')) return undefined;
    if (!/\btext\/html\b/.test(String(request.headers.accept ?? ''))) return undefined;
    loaded ??= loadDashboard();
    return send(request, reply, (given ?? loaded).notFound, 'no-cache', 404);
  };
}

/** Registers the dashboard's page and assets on the control plane's app. */
export function registerDashboard(app: FastifyInstance, given?: DashboardFiles): void {
  loaded ??= loadDashboard();
  const files = given ?? loaded;
  for (const path of DASHBOARD_ROUTES) {
    app.get(path, (request, reply) => send(request, reply, files.page, 'no-cache'));
  }
  app.get<{ Params: { version: string; name: string } }>('/assets/:version/:name', (request, reply) => {
    const file = files.assets.get(request.params.name);
    if (!file) {
      return reply
        .code(404)
        .headers(SECURITY_HEADERS)
        .type('text/plain; charset=utf-8')
        .send('No such dashboard asset.');
    }
    // A page loaded before an upgrade asks for the old version: give it today's file, uncached.
    const current = request.params.version === files.version;
    return send(request, reply, file, current ? 'public, max-age=31536000, immutable' : 'no-cache');
  });
}
