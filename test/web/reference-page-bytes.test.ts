/**
 * What keeps the Petstore's reference page at or under its bytes before the sidebar (issue 28;
 * measured by `npm run bench -- reference`): one stylesheet, our CSS compacted, the icon in the page.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { petstoreDocument } from '../../src/petstore/index.ts';
import { referenceAssets, renderReferencePage } from '../../src/web/reference/index.ts';
import { compactCss } from '../../src/web/reference/reference-assets.ts';
import { FAVICON } from '../../src/web/reference/render-reference-page.ts';
import { TEST_DEPRECATION } from '../support/petstore.ts';

describe("the reference page's bytes", () => {
  it('compacts CSS outside quoted strings only', () => {
    const css = `.a > .b,
.c:hover {
  color: red;
  font-family: system-ui, "Segoe UI" ;
}
.x span[style*="211, 99, 99"] { color: #f09090 !important; }
@media (max-width: 640px) {
  .d { margin: 0 auto; }
}
`;
    assert.equal(
      compactCss(css),
      '.a>.b,.c:hover{color:red;font-family:system-ui,"Segoe UI"}.x span[style*="211, 99, 99"]{color:#f09090 !important}@media (max-width:640px){.d{margin:0 auto}}',
    );
  });

  it('links one stylesheet, Swagger UI then ours, and carries its icon in the page', async () => {
    const assets = referenceAssets();
    const html = renderReferencePage(petstoreDocument(TEST_DEPRECATION) as Record<string, unknown>, assets);
    const links = [...html.matchAll(/<link rel="(icon|stylesheet)" href="([^"]+)">/g)].map((m) => [
      m[1],
      m[2],
    ]);
    assert.deepEqual(links, [
      ['icon', FAVICON],
      ['stylesheet', assets.url('reference-page.css')],
    ]);
    assert.match(FAVICON, /^data:image\/svg\+xml,<svg xmlns='http:\/\/www\.w3\.org\/2000\/svg'/);

    const server = createServer((req, res) => {
      if (!assets.serve(req, res, new URL(req.url ?? '/', 'http://x').pathname)) res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const answer = await fetch(`http://127.0.0.1:${port}${assets.url('reference-page.css')}`, {
        headers: { 'accept-encoding': 'identity' },
      });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get('content-type'), 'text/css; charset=utf-8');
      const served = await answer.text();
      const swaggerUi = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
      const theirs = readFileSync(join(swaggerUi, 'swagger-ui.css'), 'utf8').replace(
        /\n\/[/*]# sourceMappingURL=\S+(?: \*\/)?\s*$/,
        '\n',
      );
      assert.ok(served.startsWith(theirs), "Swagger UI's stylesheet first, as it is");
      const ours = served.slice(theirs.length);
      assert.match(ours, /^\n:root\{--kennel-ink:#1d2433;/);
      assert.equal(ours.includes('/*'), false, 'no comments of ours');
    } finally {
      server.close();
    }
  });
});
