import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * The dashboard: plain browser ES modules and CSS from ./public, served by the control plane at the
 * platform's own address (docs/decisions.md, "Dashboard"). The files are read once at start, so a
 * request never touches the disk. Assets live under /assets/<content hash>/ and are cached for a
 * year (a new version has a new address); the page itself is revalidated on every load.
 */

const PUBLIC_DIR = join(import.meta.dirname, 'public');

const uplot = dirname(createRequire(import.meta.url).resolve('uplot/package.json'));

/**
 * Libraries served among the dashboard's assets from node_modules (nothing loads from elsewhere),
 * by the name the page imports them with. uPlot draws the Traffic tab's charts (docs/decisions.md,
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
  '/account',
  '/teams/:teamId/people',
  '/projects/:slug',
  '/projects/:slug/deploys',
  '/projects/:slug/traffic',
  '/projects/:slug/settings/domains',
  '/projects/:slug/settings/cors',
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

function send(request: FastifyRequest, reply: FastifyReply, file: Asset, cacheControl: string) {
  reply.headers({
    ...SECURITY_HEADERS,
    'content-type': file.type,
    'cache-control': cacheControl,
    etag: file.etag,
    vary: 'accept-encoding',
  });
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
  if (/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) {
    return reply.header('content-encoding', 'gzip').send(file.gzip);
  }
  return reply.send(file.body);
}

export interface DashboardFiles {
  /** The content hash in asset addresses. */
  readonly version: string;
  readonly page: Asset;
  readonly assets: ReadonlyMap<string, Asset>;
}

export function loadDashboard(dir = PUBLIC_DIR): DashboardFiles {
  const names = readdirSync(dir)
    .filter((n) => n !== 'index.html' && TYPES[extname(n)] !== undefined)
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
  const html = readFileSync(join(dir, 'index.html'), 'utf8').replaceAll('%ASSETS%', `/assets/${version}`);
  return {
    version,
    page: asset(TYPES['.html'] as string, Buffer.from(html)),
    assets: new Map([...bodies].map(([name, body]) => [name, asset(TYPES[extname(name)] as string, body)])),
  };
}

let loaded: DashboardFiles | undefined;

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
