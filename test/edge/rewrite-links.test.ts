import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rewriteLinkHeader, rewriteTarget } from '../../src/edge/rewrite-links.ts';

describe("an origin's links, rewritten to the site's API address", () => {
  const root = { origin: 'http://127.0.0.1:4010', basePath: '' };
  const based = { origin: 'https://api.example.com', basePath: '/v1' };
  const site = 'https://shop.example.com';

  it('prefixes origin-relative targets with /api', () => {
    assert.equal(rewriteTarget('/pets/3', root, site), '/api/pets/3');
    assert.equal(rewriteTarget('/pets?limit=1&cursor=abc', root, site), '/api/pets?limit=1&cursor=abc');
    assert.equal(rewriteTarget('/', root, site), '/api/');
  });

  it('rewrites absolute targets on the origin to the site, and leaves others alone', () => {
    assert.equal(
      rewriteTarget('http://127.0.0.1:4010/pets/3', root, site),
      'https://shop.example.com/api/pets/3',
    );
    assert.equal(rewriteTarget('http://127.0.0.1:4010', root, site), 'https://shop.example.com/api/');
    assert.equal(rewriteTarget('http://127.0.0.1:40100/pets', root, site), 'http://127.0.0.1:40100/pets');
    assert.equal(rewriteTarget('https://elsewhere.test/pets', root, site), 'https://elsewhere.test/pets');
    assert.equal(rewriteTarget('//elsewhere.test/pets', root, site), '//elsewhere.test/pets');
    assert.equal(rewriteTarget('pets/3', root, site), 'pets/3');
  });

  it("takes the origin's base path off, and leaves targets outside it alone", () => {
    assert.equal(rewriteTarget('/v1/pets/3', based, site), '/api/pets/3');
    assert.equal(rewriteTarget('/v1', based, site), '/api/');
    assert.equal(rewriteTarget('/v10/pets', based, site), '/v10/pets');
    assert.equal(rewriteTarget('/other', based, site), '/other');
    assert.equal(
      rewriteTarget('https://api.example.com/v1/pets?id=3', based, site),
      'https://shop.example.com/api/pets?id=3',
    );
  });

  it('rewrites every target of a Link header, keeping its parameters', () => {
    assert.equal(
      rewriteLinkHeader(
        '</pets?limit=1&cursor=x>; rel="next", <https://docs.test/a>; rel="help"',
        root,
        site,
      ),
      '</api/pets?limit=1&cursor=x>; rel="next", <https://docs.test/a>; rel="help"',
    );
  });
});
