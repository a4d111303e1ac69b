import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { OperationMatcher, pathTemplateProblems } from '../../src/lib/operation-matcher.ts';
import { normalizePathText, normalizeRequestPath } from '../../src/lib/uri-path.ts';

/**
 * The one operation matcher (src/lib/operation-matcher.ts): which operation of a document a
 * request is for, in time linear in the path whatever the templates, with concrete paths before
 * templated ones; and the path normal form it matches in (src/lib/uri-path.ts).
 */
const matcherOf = (templates: readonly string[], methods: readonly string[] = ['GET']) =>
  new OperationMatcher(
    templates.flatMap((template) => methods.map((method) => ({ method, template, operation: template }))),
  );

describe('the operation matcher', () => {
  const matcher = new OperationMatcher([
    { method: 'GET', template: '/pets', operation: 'listPets' },
    { method: 'GET', template: '/pets/{petId}', operation: 'getPet' },
    { method: 'DELETE', template: '/pets/{petId}', operation: 'deletePet' },
    { method: 'GET', template: '/pets/mine', operation: 'myPets' },
    { method: 'GET', template: '/pets/{petId}/photos/{photoId}', operation: 'getPhoto' },
    { method: 'GET', template: '/files/{name}.{ext}', operation: 'getFile' },
    { method: 'GET', template: '/files/{name}.json', operation: 'getJsonFile' },
    { method: 'GET', template: '/api/v{version}/status', operation: 'status' },
    { method: 'GET', template: '/reports/{year}-{month}', operation: 'report' },
    { method: 'GET', template: '/café', operation: 'cafe' },
    { method: 'GET', template: '/', operation: 'root' },
    { method: 'POST', template: '/a/{x}/c', operation: 'postX' },
    { method: 'POST', template: '/a/b/d', operation: 'postBD' },
    // No router can serve these unambiguously: left out.
    { method: 'GET', template: '/adjacent/{a}{b}', operation: 'adjacent' },
    { method: 'GET', template: '/twice/{id}/{id}', operation: 'twice' },
  ]);

  const cases: [
    method: string,
    path: string,
    operation: string | undefined,
    params?: Record<string, string>,
  ][] = [
    ['GET', '/pets', 'listPets', {}],
    ['GET', '/pets/7', 'getPet', { petId: '7' }],
    ['HEAD', '/pets/7', 'getPet', { petId: '7' }],
    ['DELETE', '/pets/7', 'deletePet', { petId: '7' }],
    ['PUT', '/pets/7', undefined],
    // Concrete before templated; a method the concrete path lacks falls to the template.
    ['GET', '/pets/mine', 'myPets', {}],
    ['DELETE', '/pets/mine', 'deletePet', { petId: 'mine' }],
    ['GET', '/pets/7/photos/a%2Fb', 'getPhoto', { petId: '7', photoId: 'a%2Fb' }],
    ['GET', '/pets/', undefined],
    ['GET', '/pets//photos/1', undefined],
    ['GET', '/pets/7/', undefined],
    ['GET', '/pets/7/photos', undefined],
    // Mixed segments: more literal text first; literals at their first occurrence, the last at the end.
    ['GET', '/files/a.b.json', 'getJsonFile', { name: 'a.b' }],
    ['GET', '/files/a.b.c', 'getFile', { name: 'a', ext: 'b.c' }],
    ['GET', '/files/a.', undefined],
    // `{name}.json` needs a non-empty name, and `{name}.{ext}` a dot after the first character.
    ['GET', '/files/.json', undefined],
    ['GET', '/api/v2/status', 'status', { version: '2' }],
    ['GET', '/api/v/status', undefined],
    ['GET', '/reports/2026-11', 'report', { year: '2026', month: '11' }],
    ['GET', '/reports/2026-11-27', 'report', { year: '2026', month: '11-27' }],
    ['GET', '/caf%C3%A9', 'cafe', {}],
    ['GET', '/', 'root', {}],
    ['GET', '', undefined],
    ['POST', '/a/b/c', 'postX', { x: 'b' }],
    ['POST', '/a/b/d', 'postBD', {}],
    ['GET', '/adjacent/xy', undefined],
    ['GET', '/twice/1/2', undefined],
  ];

  it('answers each case of the table', () => {
    for (const [method, path, operation, params] of cases) {
      const found = matcher.match(method, path);
      assert.equal(found?.operation, operation, `${method} ${path}`);
      if (operation !== undefined) assert.deepEqual(found?.params, params, `${method} ${path}`);
    }
    assert.equal(matcher.match('HEAD', '/pets/7')?.method, 'GET');
    assert.equal(matcher.match('GET', '/pets/7')?.template, '/pets/{petId}');
    assert.equal(matcher.size, 13);
  });

  it('keeps the first of two operations with the same method and shape', () => {
    const twins = matcherOf(['/a/{x}', '/a/{y}']);
    assert.deepEqual(twins.match('GET', '/a/1'), {
      method: 'GET',
      template: '/a/{x}',
      params: { x: '1' },
      operation: '/a/{x}',
    });
  });

  it('reads a parameter named __proto__ as a name', () => {
    const found = matcherOf(['/a/{__proto__}']).match('GET', '/a/1');
    assert.equal(Object.getPrototypeOf(found?.params), Object.prototype);
    assert.equal(Object.hasOwn(found?.params ?? {}, '__proto__'), true);
  });

  it('builds from a document, each operation as `pick` makes it', () => {
    const fromDocument = OperationMatcher.fromDocument(
      {
        paths: {
          '/pets/{id}': { get: { operationId: 'getPet' }, parameters: [], summary: 'x' },
          '/skip': { get: { operationId: 'skipped' } },
          '/bad': null,
        },
      },
      (operation, method, template) =>
        operation.operationId === 'skipped' ? undefined : `${method} ${template} ${operation.operationId}`,
    );
    assert.equal(fromDocument.size, 1);
    assert.equal(fromDocument.match('GET', '/pets/3')?.operation, 'get /pets/{id} getPet');
    assert.equal(fromDocument.match('GET', '/skip'), undefined);
  });

  it('takes time linear in the path, however hostile the templates', () => {
    const hostile = [
      `/${Array.from({ length: 20 }, (_, i) => `{p${i}}`).join('')}x`,
      `/${Array.from({ length: 20 }, (_, i) => `{p${i}}`).join('a')}x`,
      `/${Array.from({ length: 20 }, (_, i) => `{p${i}}`).join('aa')}`,
      ...Array.from({ length: 200 }, (_, i) => `/${'{a}/'.repeat(i % 20)}b${i}`),
      ...Array.from({ length: 50 }, (_, i) => `/x/${'a/'.repeat(i)}{last}/z`),
    ];
    const router = matcherOf(hostile);
    for (const path of [
      `/${'a'.repeat(10_000)}`,
      `/${'a'.repeat(10_000)}y`,
      `/${'a/'.repeat(5_000)}c`,
      `/x/${'a/'.repeat(5_000)}`,
      `/${'/'.repeat(10_000)}`,
    ]) {
      const started = performance.now();
      router.match('GET', path);
      const ms = performance.now() - started;
      assert.ok(ms < 100, `${path.slice(0, 20)}… (${path.length} bytes) took ${ms} ms`);
    }
  });

  /** A template's reference: a regular expression, parameters lazy (each literal's first fit). */
  const referenceOf = (template: string) => {
    const names: string[] = [];
    const source = template
      .split(/(\{[^{}/]+\})/)
      .map((part) => {
        if (/^\{[^{}/]+\}$/.test(part)) {
          names.push(part.slice(1, -1));
          return '([^/]+?)';
        }
        return normalizePathText(part, 'utf8').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      })
      .join('');
    const pattern = new RegExp(`^${source}$`);
    return (path: string) => {
      const found = pattern.exec(path);
      return found ? Object.fromEntries(names.map((name, i) => [name, found[i + 1] as string])) : undefined;
    };
  };

  const segment = fc.oneof(
    fc.constantFrom('a', 'b', 'ab', '.', 'a.b'),
    fc.constant('{p}'),
    fc.constantFrom('{p}.{q}', 'a{p}', '{p}a', '{p}.json', 'v{p}', '{p}-{q}-{r}', '{p}ab{q}'),
  );
  const template = fc.array(segment, { minLength: 1, maxLength: 4 }).map((segments) => {
    let n = 0;
    return `/${segments.join('/')}`.replace(/\{([pqr])\}/g, (_, name: string) => `{${name}${n++}}`);
  });
  const requestPath = fc
    .array(fc.constantFrom('a', 'b', '.', '-', 'json', 'v', 'ab', 'x'), { maxLength: 6 })
    .chain((pieces) =>
      fc.array(fc.nat(pieces.length), { maxLength: 4 }).map((cuts) => {
        const joined = pieces.map((piece, i) => (cuts.includes(i) ? `/${piece}` : piece));
        return `/${joined.join('')}`;
      }),
    );

  /** The templates, and a path: random, or one of them with random values (so that many match). */
  const withPath = (templates: string[]) =>
    fc.tuple(
      fc.constant(templates),
      templates.length === 0
        ? requestPath
        : fc.oneof(
            requestPath,
            fc
              .tuple(
                fc.nat(templates.length - 1),
                fc.array(fc.constantFrom('a', 'b', '.', 'a.b', 'json', 'x-y', 'ab'), {
                  minLength: 12,
                  maxLength: 12,
                }),
              )
              .map(([at, values]) => {
                let n = 0;
                return (templates[at] as string).replace(/\{[^{}/]+\}/g, () => values[n++] as string);
              }),
          ),
    );

  it('agrees with a regular-expression reference on random templates and paths', () => {
    fc.assert(
      fc.property(fc.uniqueArray(template, { maxLength: 8 }).chain(withPath), ([templates, path]) => {
        const served = templates.filter((t) => pathTemplateProblems({ [t]: {} }).length === 0);
        const found = matcherOf(served).match('GET', path);
        const references = served.map((t) => ({ template: t, params: referenceOf(t)(path) }));
        const matching = references.filter((r) => r.params !== undefined);
        if (matching.length === 0) {
          assert.equal(found, undefined);
          return;
        }
        assert.ok(found, `${path} matches ${matching.map((r) => r.template).join(', ')}`);
        // What it answers does match, with the reference's values.
        const reference = references.find((r) => r.template === found.template);
        assert.deepEqual(found.params, reference?.params);
        // A concrete template that matches wins.
        const concrete = matching.find((r) => !r.template.includes('{'));
        if (concrete) assert.equal(found.template, concrete.template);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('path templates no router can serve', () => {
  it('names the path, the problem and what to do', () => {
    assert.deepEqual(
      pathTemplateProblems({
        '/pets/{petId}': { get: {}, delete: {} },
        '/files/{name}.{ext}': {},
        '/a/{x}{y}': {},
        '/b/{id}/c/{id}': {},
        '/pets/{id}': { get: {}, put: {} },
        '/c/{x}': {},
      }),
      [
        '/paths/~1a~1{x}{y}: the parameters {x} and {y} have no literal text between them, so no router can tell where one ends: put a separator between them (e.g. {x}.{y}) or make them one parameter.',
        '/paths/~1b~1{id}~1c~1{id}: the parameter {id} appears twice: give each path parameter its own name.',
        "/paths/~1pets~1{id}/get: GET /pets/{id} differs from GET /pets/{petId} only in its parameters' names, so no router can tell which one a request is for: keep one of them.",
      ],
    );
    assert.deepEqual(pathTemplateProblems(undefined), []);
    assert.deepEqual(pathTemplateProblems({ '/a': {}, '/a/{b}': {}, '/a/{b}/c': {}, '/{a}.{b}': {} }), []);
  });

  it('serves twins that differ in parameter names when their methods differ (as GitHub’s description has)', () => {
    assert.deepEqual(
      pathTemplateProblems({
        '/orgs/{org}/attestations/{subject_digest}': { get: {} },
        '/orgs/{org}/attestations/{attestation_id}': { delete: {} },
      }),
      [],
    );
    const matcher = OperationMatcher.fromDocument(
      {
        paths: {
          '/orgs/{org}/attestations/{subject_digest}': { get: {} },
          '/orgs/{org}/attestations/{attestation_id}': { delete: {} },
        },
      },
      (_operation, method, template) => `${method} ${template}`,
    );
    assert.deepEqual(matcher.match('DELETE', '/orgs/k/attestations/7')?.params, {
      org: 'k',
      attestation_id: '7',
    });
    assert.deepEqual(matcher.match('GET', '/orgs/k/attestations/sha')?.params, {
      org: 'k',
      subject_digest: 'sha',
    });
  });
});

describe('the path normal form', () => {
  it('decodes unreserved escapes, writes the others in uppercase, and escapes what may not stand raw', () => {
    const table: [string, string | undefined][] = [
      ['/pets', '/pets'],
      ['/%70ets', '/pets'],
      ['/store/%69nventory', '/store/inventory'],
      ['/a%2fb', '/a%2Fb'],
      ['/a%2Fb', '/a%2Fb'],
      ['/%7e%41%5F%2D%2E', '/~A_-.'],
      ['/%c3%a9', '/%C3%A9'],
      ['/100%', '/100%25'],
      ['/%zz', '/%25zz'],
      ['/%%32e', '/%252e'],
      ['/a b"<>\\^`{|}', '/a%20b%22%3C%3E%5C%5E%60%7B%7C%7D'],
      ["/!$&'()*+,;=:@", "/!$&'()*+,;=:@"],
      ['/\u00e9', '/%E9'],
      ['/../x', undefined],
      ['/a/..', undefined],
      ['/a/.', undefined],
      ['/a/./b', undefined],
      ['/%2e%2e/x', undefined],
      ['/%2E./x', undefined],
      ['/.%2e', undefined],
      ['/%2e', undefined],
      ['/..a/a..', '/..a/a..'],
      ['/.well-known', '/.well-known'],
      ['/...', '/...'],
    ];
    for (const [path, normal] of table) assert.equal(normalizeRequestPath(path), normal, path);
    assert.equal(normalizePathText('/café', 'utf8'), '/caf%C3%A9');
    assert.equal(normalizePathText('/\u{1F436}', 'utf8'), '/%F0%9F%90%B6');
    assert.equal(normalizePathText('/\ud800', 'utf8'), '/%EF%BF%BD');
  });

  it('is idempotent', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('%', '2', 'e', 'E', 'f', '/', '.', 'a', ' ', 'z') }),
        (text) => {
          const once = normalizePathText(`/${text}`, 'latin1');
          assert.equal(normalizePathText(once, 'latin1'), once);
        },
      ),
    );
  });
});
