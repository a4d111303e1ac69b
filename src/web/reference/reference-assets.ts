import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { CompressedBody } from './compressed-body.ts';

/**
 * The path reserved on every published site for the reference's own files. It is outside `/api`
 * (which is the project's), so it is never proxied and a project cannot shadow it.
 */
export const REFERENCE_PREFIX = '/_kennel/reference/';

/** A year: asset URLs carry their content's hash, so a changed file is a new URL. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

const here = import.meta.dirname;
const swaggerUi = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/**
 * Every file the reference and changelog pages load, by the name the pages refer to them with.
 * `from` lists several files for one served in one piece, joined in order.
 */
const FILES = {
  'swagger-ui-bundle.js': {
    from: join(swaggerUi, 'swagger-ui-bundle.js'),
    type: 'text/javascript; charset=utf-8',
  },
  /**
   * The reference page's one stylesheet: Swagger UI's, then ours over it. One response instead of
   * two saves its headers and lets Brotli share one context (issue 28: the Petstore's page at or
   * under its bytes before the sidebar). reference.css alone is the changelog page's.
   */
  'reference-page.css': {
    from: [join(swaggerUi, 'swagger-ui.css'), join(here, 'reference.css')],
    type: 'text/css; charset=utf-8',
  },
  'reference.js': { from: join(here, 'reference.js'), type: 'text/javascript; charset=utf-8' },
  'reference.css': { from: join(here, 'reference.css'), type: 'text/css; charset=utf-8' },
  /** The changelog page's layout (src/web/changelog/), over reference.css. */
  'changelog.css': { from: join(here, '../changelog/changelog.css'), type: 'text/css; charset=utf-8' },
  'favicon.png': { from: join(swaggerUi, 'favicon-32x32.png'), type: 'image/png' },
} satisfies Record<string, { from: string | string[]; type: string }>;

export type ReferenceFile = keyof typeof FILES;

/** The name of every file the page may refer to. */
export const REFERENCE_FILES = Object.keys(FILES) as readonly ReferenceFile[];

export interface ReferenceAssets {
  /** The versioned URL of a file, e.g. `/_kennel/reference/3q2Xk…/reference.js`. */
  url(name: ReferenceFile): string;
  /**
   * Answers a request under REFERENCE_PREFIX: the file if the path names one at its current
   * version (GET or HEAD), otherwise false and nothing is written.
   */
  serve(req: IncomingMessage, res: ServerResponse, path: string, headers?: Record<string, string>): boolean;
  /** Starts compressing (if no request has yet) and settles when every Brotli copy is ready. */
  compressed(): Promise<void>;
}

function stripSourceMap(content: Buffer, name: string): Buffer {
  // The maps are not served (they would double the download for nobody); a dangling reference
  // would only make browser tools ask for a file that is not there.
  if (!name.endsWith('.js') && !name.endsWith('.css')) return content;
  return Buffer.from(content.toString('utf8').replace(/\n\/[/*]# sourceMappingURL=\S+(?: \*\/)?\s*$/, '\n'));
}

/**
 * Our own script and stylesheet without their comments and indentation: they are written to be
 * read (a third of their bytes are comments saying why), served to be small. Only whole-line
 * comments go (`//` lines, `/* … *\/` blocks opening a line), which no string of ours spans.
 */
export function stripComments(text: string): string {
  return text
    .replace(/^[ \t]*\/\*[\s\S]*?\*\/[ \t]*\n/gm, '')
    .replace(/^[ \t]*\/\/.*\n/gm, '')
    .replace(/^[ \t]+/gm, '');
}

/**
 * Our stylesheet in fewer bytes: its lines joined, no space around `{ } ; , >` or after `:`, and
 * no `;` before `}`. Quoted strings (attribute selectors such as `[style*="211, 99, 99"]`) are
 * left as they are.
 */
export function compactCss(text: string): string {
  return text
    .split(/("[^"]*"|'[^']*')/)
    .map((part, i) =>
      i % 2 === 1
        ? part
        : part
            .replace(/\s+/g, ' ')
            .replace(/ ?([{};,>]) ?/g, '$1')
            .replace(/: /g, ':')
            .replace(/;}/g, '}'),
    )
    .join('')
    .trim();
}

/** One file as served: source maps' references dropped; ours also without comments. */
function readAsset(from: string): Buffer {
  const content = stripSourceMap(readFileSync(from), from);
  if (dirname(from) !== here) return content;
  const text = stripComments(content.toString('utf8'));
  return Buffer.from(from.endsWith('.css') ? `${compactCss(text)}\n` : text);
}

function loadAssets(): ReferenceAssets {
  const byPath = new Map<string, CompressedBody>();
  const urls = new Map<string, string>();
  for (const [name, { from, type }] of Object.entries(FILES)) {
    const parts = (Array.isArray(from) ? from : [from]).map(readAsset);
    const content = Buffer.concat(parts.flatMap((part, i) => (i === 0 ? [part] : [Buffer.from('\n'), part])));
    const body = new CompressedBody(type, content);
    const url = `${REFERENCE_PREFIX}${body.hash}/${name}`;
    byPath.set(url, body);
    urls.set(name, url);
  }
  let compressing: Promise<void> | undefined;
  const compressAll = () => {
    compressing ??= Promise.all([...byPath.values()].map((body) => body.compress())).then(() => {});
    return compressing;
  };
  return {
    url(name) {
      return urls.get(name) as string;
    },
    serve(req, res, path, headers = {}) {
      const body = byPath.get(path);
      if (!body || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
      if (!compressing) {
        // On the first request, not at import: a process that never serves the reference (most
        // tests, the control plane alone) never pays for Brotli. Gzip is ready for this answer.
        for (const each of byPath.values()) each.compressSoon();
        void compressAll();
      }
      body.send(req, res, {
        ...headers,
        'cache-control': IMMUTABLE,
        'x-content-type-options': 'nosniff',
        'cross-origin-resource-policy': 'same-origin',
      });
      return true;
    },
    compressed: compressAll,
  };
}

let shared: ReferenceAssets | undefined;

/** The reference's files, read once per process (they ship with the code and never change). */
export function referenceAssets(): ReferenceAssets {
  shared ??= loadAssets();
  return shared;
}
