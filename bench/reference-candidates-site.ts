import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { CompressedBody } from '../src/web/reference/index.ts';

/**
 * The reference renderers issue 28 compares with Kennel's own, each served from one loopback site
 * as a published site would serve it: its files compressed once (Brotli at its best, as Kennel's
 * assets are), the document at /openapi.json (Brotli 5, as Kennel's per-deploy bodies), and a page
 * per renderer at /<name>/ that loads them. They live in bench/renderers (about 850 MB installed,
 * never a dependency of the product), installed by the first run of the suite.
 */

export const RENDERERS_DIR = join(import.meta.dirname, 'renderers');
const MODULES = join(RENDERERS_DIR, 'node_modules');

/** Installs bench/renderers/package.json's pinned versions if they are not there yet. */
export function installRenderers(log: (line: string) => void): void {
  if (existsSync(join(MODULES, '.package-lock.json'))) return;
  log('installing the candidate renderers into bench/renderers (once; a few minutes)');
  execFileSync(
    'npm',
    [
      'install',
      '--prefix',
      RENDERERS_DIR,
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      '--legacy-peer-deps',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
}

const version = (name: string) =>
  (JSON.parse(readFileSync(join(MODULES, name, 'package.json'), 'utf8')) as { version: string }).version;

export interface Candidate {
  /** Its path on the site, /<id>/. */
  readonly id: string;
  readonly label: string;
  readonly packageName: string;
  /** The page's <head> and <body> content, loading files under /npm/ and the document at /openapi.json. */
  page(title: string): string;
}

const npm = (file: string) => `/npm/${file}`;

export const CANDIDATES: readonly Candidate[] = [
  {
    id: 'swagger-ui',
    label: 'Swagger UI (deep links, filter)',
    packageName: 'swagger-ui-dist',
    page: () =>
      `<link rel="stylesheet" href="${npm('swagger-ui-dist/swagger-ui.css')}">
<script src="${npm('swagger-ui-dist/swagger-ui-bundle.js')}" defer></script>
</head><body><div id="ui"></div>
<script type="module">
window.SwaggerUIBundle({ url: '/openapi.json', dom_id: '#ui', deepLinking: true, filter: true,
  tryItOutEnabled: false, presets: [window.SwaggerUIBundle.presets.apis], layout: 'BaseLayout' });
</script>`,
  },
  {
    id: 'scalar',
    label: 'Scalar',
    packageName: '@scalar/api-reference',
    page: () =>
      `</head><body><div id="app"></div>
<script src="${npm('@scalar/api-reference/dist/browser/standalone.js')}"></script>
<script>Scalar.createApiReference('#app', { url: '/openapi.json' });</script>`,
  },
  {
    id: 'elements',
    label: 'Stoplight Elements',
    packageName: '@stoplight/elements',
    page: () =>
      `<link rel="stylesheet" href="${npm('@stoplight/elements/styles.min.css')}">
<script src="${npm('@stoplight/elements/web-components.min.js')}"></script>
</head><body style="height:100vh"><elements-api apiDescriptionUrl="/openapi.json" router="hash" layout="sidebar"></elements-api>`,
  },
  {
    id: 'redoc',
    label: 'Redoc',
    packageName: 'redoc',
    page: () =>
      `</head><body><redoc spec-url="/openapi.json"></redoc>
<script src="${npm('redoc/bundles/redoc.standalone.js')}"></script>`,
  },
  {
    id: 'rapidoc',
    label: 'RapiDoc',
    packageName: 'rapidoc',
    page: () =>
      `<script type="module" src="${npm('rapidoc/dist/rapidoc-min.js')}"></script>
</head><body><rapi-doc spec-url="/openapi.json" render-style="read" allow-search="true" show-header="false"></rapi-doc>`,
  },
];

export const candidateVersion = (candidate: Candidate) => version(candidate.packageName);

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
};

/** The renderers' files, read and compressed once for every site of the process. */
const files = new Map<string, CompressedBody | null>();

/** Serves every candidate's page for `document` on loopback. */
export async function serveCandidates(
  document: Record<string, unknown>,
): Promise<{ url: string; close(): void; warm(paths: string[]): Promise<void> }> {
  const fileBody = (path: string): CompressedBody | null => {
    if (files.has(path)) return files.get(path) ?? null;
    const relative = normalize(path.slice('/npm/'.length));
    const from = join(MODULES, relative);
    let body: CompressedBody | null = null;
    if (!relative.startsWith('..') && existsSync(from)) {
      const content = readFileSync(from);
      body = new CompressedBody(TYPES[extname(from)] ?? 'application/octet-stream', content);
    }
    files.set(path, body);
    return body;
  };
  const info = (document.info ?? {}) as { title?: string };
  const pages = new Map(
    CANDIDATES.map((c) => [
      `/${c.id}/`,
      new CompressedBody(
        'text/html; charset=utf-8',
        Buffer.from(
          `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${info.title ?? 'API'}</title>\n${c.page(info.title ?? 'API')}\n</body></html>\n`,
        ),
      ),
    ]),
  );
  const openapi = new CompressedBody(
    'application/json; charset=utf-8',
    Buffer.from(JSON.stringify(document)),
    {
      brotliQuality: 5,
    },
  );
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const body =
      path === '/openapi.json' ? openapi : path.startsWith('/npm/') ? fileBody(path) : pages.get(path);
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    // As a published site's assets: cached for a year, compressed.
    body.send(req, res, {
      'cache-control': path.startsWith('/npm/') ? 'public, max-age=31536000' : 'no-cache',
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const all = [openapi, ...pages.values()];
  await Promise.all(all.map((b) => b.compress()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => server.close(),
    /** Compresses the files a first load asked for (Brotli 11 takes seconds for the big bundles). */
    async warm(paths) {
      await Promise.all(
        paths
          .filter((p) => p.startsWith('/npm/'))
          .map((p) => fileBody(p)?.compress())
          .filter(Boolean),
      );
    },
  };
}
