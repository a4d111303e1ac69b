import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { OperationMatchCache } from '../../src/lib/operation-match-cache.ts';
import { type OperationMatch, OperationMatcher } from '../../src/lib/operation-matcher.ts';

/**
 * The operation matcher's cache (src/lib/operation-match-cache.ts): the same answers as matching
 * afresh, in bounded memory whatever paths the clients send.
 */
const OPERATIONS = [
  { method: 'GET', template: '/pets', operation: 'listPets' },
  { method: 'GET', template: '/pets/{petId}', operation: 'getPet' },
  { method: 'DELETE', template: '/pets/{petId}', operation: 'deletePet' },
  { method: 'GET', template: '/pets/mine', operation: 'myPets' },
  { method: 'GET', template: '/pets/{petId}/photos/{photoId}', operation: 'getPhoto' },
  { method: 'GET', template: '/files/{name}.{ext}', operation: 'getFile' },
  { method: 'GET', template: '/files/{name}.json', operation: 'getJsonFile' },
  { method: 'GET', template: '/api/v{version}/status', operation: 'status' },
  { method: 'GET', template: '/q/{__proto__}', operation: 'proto' },
];

/** A matcher that caches nothing (no path is short enough). */
const uncached = () =>
  new OperationMatcher(OPERATIONS, new OperationMatchCache<OperationMatch<string>>(2048, -1));

const plain = (found: OperationMatch<string> | undefined) =>
  found && {
    method: found.method,
    template: found.template,
    params: Object.entries(found.params),
    operation: found.operation,
  };

describe('the operation match cache', () => {
  const method = fc.constantFrom('GET', 'HEAD', 'DELETE', 'POST');
  const piece = fc.constantFrom(
    'pets',
    'mine',
    'photos',
    'files',
    'api',
    'v2',
    'status',
    'q',
    'a.json',
    'a.b',
    '1',
    '',
  );
  const path = fc.array(piece, { maxLength: 5 }).map((pieces) => `/${pieces.join('/')}`);

  it('answers as the matcher does, request after request, while it fills and empties', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(method, path), { minLength: 1, maxLength: 60 }), (requests) => {
        const cache = new OperationMatchCache<OperationMatch<string>>(8);
        const cached = new OperationMatcher(OPERATIONS, cache);
        const fresh = uncached();
        // Each request twice: the second answer comes from the cache when it was kept.
        for (const [m, p] of [...requests, ...requests]) {
          assert.deepEqual(plain(cached.match(m, p)), plain(fresh.match(m, p)), `${m} ${p}`);
          assert.ok(cache.size <= 8, `${cache.size} answers kept`);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('keeps at most its limit whatever the paths, then starts afresh', () => {
    const cache = new OperationMatchCache<OperationMatch<string>>(2048);
    const matcher = new OperationMatcher(OPERATIONS, cache);
    const sizes: number[] = [];
    for (let i = 0; i < 5000; i++) {
      matcher.match(i % 2 === 0 ? 'GET' : 'DELETE', `/pets/${i}`);
      if (i % 1000 === 999) sizes.push(cache.size);
    }
    // Full at 2,048, emptied by the 2,049th, full again at 4,096, emptied by the 4,097th.
    assert.deepEqual(sizes, [1000, 2000, 952, 1952, 904]);
    assert.deepEqual(plain(matcher.match('GET', '/pets/4998')), {
      method: 'GET',
      template: '/pets/{petId}',
      params: [['petId', '4998']],
      operation: 'getPet',
    });
  });

  it('neither keeps nor looks up paths longer than its bound', () => {
    const cache = new OperationMatchCache<OperationMatch<string>>(2048, 128);
    const matcher = new OperationMatcher(OPERATIONS, cache);
    const long = `/pets/${'x'.repeat(123)}`;
    assert.equal(long.length, 129);
    assert.equal(matcher.match('GET', long)?.params.petId, 'x'.repeat(123));
    assert.equal(cache.size, 0);
    const longest = `/pets/${'x'.repeat(122)}`;
    assert.equal(matcher.match('GET', longest)?.params.petId, 'x'.repeat(122));
    assert.equal(cache.size, 1);
  });

  it('remembers a request that matched nothing, and gives the same frozen answer again', () => {
    const cache = new OperationMatchCache<OperationMatch<string>>();
    const matcher = new OperationMatcher(OPERATIONS, cache);
    assert.equal(matcher.match('POST', '/pets'), undefined);
    assert.equal(cache.get('POST', '/pets'), null);
    const first = matcher.match('GET', '/pets/7');
    assert.equal(matcher.match('GET', '/pets/7'), first);
    assert.ok(first && Object.isFrozen(first) && Object.isFrozen(first.params));
    // HEAD falls back to GET, and is kept under HEAD.
    assert.equal(matcher.match('HEAD', '/pets/7')?.method, 'GET');
    assert.equal(cache.get('HEAD', '/pets/7')?.operation, 'getPet');
    assert.equal(cache.size, 3);
  });
});
