import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { atSiteApi } from '../../src/edge/published-site.ts';
import { petstoreDocument } from '../../src/petstore/index.ts';
import { REFERENCE_PAGE_CSP, REFERENCE_PREFIX, referenceAssets } from '../../src/web/reference/index.ts';
import { testDialects } from '../support/databases.ts';
import { type PlainEdge, startPlainEdge } from '../support/edge.ts';
import { listenOnLoopback } from '../support/http.ts';
import { TEST_DEPRECATION } from '../support/petstore.ts';
import { seedPetstoreProject, startPlatformContext, type TestPlatform } from '../support/platform.ts';

interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A request whose body is kept as bytes (compressed answers are not text). */
function fetchRaw(
  port: number,
  host: string,
  path: string,
  init: { method?: string; headers?: Record<string, string> } = {},
): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: init.method ?? 'GET', headers: { host, ...init.headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const swaggerUi = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const IMMUTABLE = 'public, max-age=31536000, immutable';

for (const dialect of testDialects()) {
  describe(`the reference's files on published sites (${dialect})`, () => {
    let p: TestPlatform;
    let edge: PlainEdge;
    let echo: Server;
    let port: number;
    let assetUrls: string[];

    const get = (host: string, path: string, headers: Record<string, string> = {}, method = 'GET') =>
      fetchRaw(port, host, path, { method, headers });

    before(async () => {
      p = await startPlatformContext(dialect, { PLATFORM_DOMAIN: 'localhost' });
      echo = createServer((req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ origin: 'echo', url: req.url }));
      });
      const echoPort = await listenOnLoopback(echo);
      await seedPetstoreProject(p.ctx, `http://127.0.0.1:${echoPort}`);
      edge = await startPlainEdge(p, { responseTimeoutMs: 2000 });
      port = edge.port;
    });

    after(async () => {
      await edge?.close();
      echo?.close();
      await p?.close();
    });

    it('serves the page at / with the document embedded, versioned asset URLs and a self-only CSP', async () => {
      const page = await get('petstore.localhost', '/', { 'accept-encoding': 'br' });
      assert.equal(page.status, 200);
      assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
      assert.equal(page.headers['content-encoding'], 'br');
      assert.equal(page.headers['cache-control'], 'no-cache');
      assert.equal(page.headers['content-security-policy'], REFERENCE_PAGE_CSP);
      assert.match(REFERENCE_PAGE_CSP, /default-src 'self'; script-src 'self';/);
      assert.equal(page.headers['x-content-type-options'], 'nosniff');
      const html = brotliDecompressSync(page.body).toString('utf8');
      const embedded = /<script type="application\/json" id="kennel-openapi">(.*?)<\/script>/s.exec(html);
      assert.deepEqual(
        JSON.parse(embedded?.[1] ?? 'null'),
        JSON.parse(JSON.stringify(petstoreDocument(TEST_DEPRECATION))),
      );
      assetUrls = [...html.matchAll(/(?:src|href)="(\/_kennel\/reference\/[^"]+)"/g)].map(
        (m) => m[1] as string,
      );
      assert.deepEqual(
        assetUrls.map((url) => url.replace(/^\/_kennel\/reference\/[\w-]{12}\//, '')),
        ['reference-page.css', 'swagger-ui-bundle.js', 'reference.js'],
      );
      // No address of another host anywhere the browser would load from.
      assert.doesNotMatch(html.replace(embedded?.[0] ?? '', ''), /(?:src|href)="(?:https?:)?\/\//);

      const again = await get('petstore.localhost', '/', {
        'accept-encoding': 'br',
        'if-none-match': String(page.headers.etag),
      });
      assert.equal(again.status, 304);
      assert.equal(again.body.length, 0);
    });

    it('serves /openapi.json and /openapi.yaml compressed when asked, with an ETag, revalidated', async () => {
      const plain = await get('petstore.localhost', '/openapi.json', {});
      assert.equal(plain.status, 200);
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.equal(plain.headers['cache-control'], 'no-cache');
      // The document as published: its servers name the site's own API address.
      const expected = JSON.parse(
        JSON.stringify(
          atSiteApi(petstoreDocument(TEST_DEPRECATION), {
            url: 'https://petstore.localhost/api',
            originUrl: 'http://origin.invalid',
          }),
        ),
      );
      assert.deepEqual(expected.servers, [
        { url: 'https://petstore.localhost/api', description: 'The API on this site' },
        { url: '/api', description: 'The API on this site, relative to the address of this document' },
      ]);
      assert.deepEqual(JSON.parse(plain.body.toString('utf8')), expected);
      const br = await get('petstore.localhost', '/openapi.json', { 'accept-encoding': 'gzip, br' });
      assert.equal(br.headers['content-encoding'], 'br');
      assert.equal(br.headers['content-type'], 'application/json; charset=utf-8');
      assert.ok(br.body.length * 4 < plain.body.length, `${br.body.length} of ${plain.body.length} bytes`);
      assert.deepEqual(JSON.parse(brotliDecompressSync(br.body).toString('utf8')), expected);
      const yaml = await get('petstore.localhost', '/openapi.yaml', { 'accept-encoding': 'gzip' });
      assert.equal(yaml.headers['content-encoding'], 'gzip');
      assert.equal(yaml.headers['content-type'], 'application/yaml; charset=utf-8');
      assert.match(gunzipSync(yaml.body).toString('utf8'), /^openapi: 3\.0\.3$/m);
      const again = await get('petstore.localhost', '/openapi.json', {
        'accept-encoding': 'gzip, br',
        'if-none-match': String(br.headers.etag),
      });
      assert.equal(again.status, 304);
    });

    it('serves each file with a year of immutable caching, gzip at once and Brotli once ready', async () => {
      const bundle = assetUrls.find((url) => url.endsWith('/swagger-ui-bundle.js')) as string;
      const onDisk = readFileSync(join(swaggerUi, 'swagger-ui-bundle.js'), 'utf8').replace(
        /\n\/\/# sourceMappingURL=\S+\s*$/,
        '\n',
      );
      const identity = await get('petstore.localhost', bundle);
      assert.equal(identity.status, 200);
      assert.equal(identity.headers['content-encoding'], undefined);
      assert.equal(identity.headers['cache-control'], IMMUTABLE);
      assert.equal(identity.headers.vary, 'Accept-Encoding');
      assert.equal(identity.headers['content-type'], 'text/javascript; charset=utf-8');
      assert.equal(identity.headers['content-length'], String(identity.body.length));
      assert.equal(identity.body.toString('utf8'), onDisk);
      assert.doesNotMatch(onDisk, /sourceMappingURL/);

      const gzip = await get('petstore.localhost', bundle, { 'accept-encoding': 'gzip, deflate' });
      assert.equal(gzip.headers['content-encoding'], 'gzip');
      assert.equal(gunzipSync(gzip.body).toString('utf8'), onDisk);
      assert.ok(gzip.body.length < identity.body.length / 3, `gzip ${gzip.body.length} bytes`);

      await referenceAssets().compressed();
      const br = await get('petstore.localhost', bundle, { 'accept-encoding': 'gzip, deflate, br' });
      assert.equal(br.headers['content-encoding'], 'br');
      assert.equal(br.headers['cache-control'], IMMUTABLE);
      assert.equal(brotliDecompressSync(br.body).toString('utf8'), onDisk);
      assert.ok(br.body.length < gzip.body.length, `br ${br.body.length} < gzip ${gzip.body.length}`);
      // br refused with q=0: gzip it is.
      const refused = await get('petstore.localhost', bundle, { 'accept-encoding': 'br;q=0, gzip' });
      assert.equal(refused.headers['content-encoding'], 'gzip');

      // Each representation has its own ETag; the right one gets 304.
      assert.notEqual(br.headers.etag, gzip.headers.etag);
      const revalidated = await get('petstore.localhost', bundle, {
        'accept-encoding': 'br',
        'if-none-match': String(br.headers.etag),
      });
      assert.equal(revalidated.status, 304);
      assert.equal(revalidated.headers['cache-control'], IMMUTABLE);

      const head = await get('petstore.localhost', bundle, { 'accept-encoding': 'br' }, 'HEAD');
      assert.equal(head.status, 200);
      assert.equal(head.headers['content-length'], String(br.body.length));
      assert.equal(head.body.length, 0);

      // The changelog page's icon (the reference's is in its page).
      const png = await get('petstore.localhost', referenceAssets().url('favicon.png'), {
        'accept-encoding': 'br',
      });
      assert.equal(png.headers['content-type'], 'image/png');
    });

    it('answers 404 for an unknown file, a stale version or another method, and never proxies the reserved path', async () => {
      const reference = assetUrls.find((url) => url.endsWith('/reference.js')) as string;
      for (const [path, method] of [
        [`${REFERENCE_PREFIX}nothing.js`, 'GET'],
        [`${REFERENCE_PREFIX}AAAAAAAAAAAA/reference.js`, 'GET'],
        [reference.replace('reference.js', 'swagger-ui.js'), 'GET'],
        [reference, 'POST'],
      ] as const) {
        const answer = await get('petstore.localhost', path, {}, method);
        assert.equal(answer.status, 404, `${method} ${path}`);
        assert.equal(
          (JSON.parse(answer.body.toString('utf8')) as { code: string }).code,
          'page_not_found',
          `${method} ${path}`,
        );
      }
      // The project's origin sees /_kennel/… only when it is under /api/, like any other path.
      const proxied = await get('petstore.localhost', `/api${reference}`);
      assert.deepEqual(JSON.parse(proxied.body.toString('utf8')), { origin: 'echo', url: reference });
      // Only published sites have the files.
      const elsewhere = await get('nobody.localhost', reference);
      assert.equal(elsewhere.status, 404);
      assert.equal((JSON.parse(elsewhere.body.toString('utf8')) as { code: string }).code, 'host_not_found');
    });
  });
}
