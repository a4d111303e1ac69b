import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { petstoreDocument, SCOPES } from '../../src/petstore/index.ts';
import { testDialects } from '../support/databases.ts';
import { startPetstore, TEST_DEPRECATION, type TestPetstore } from '../support/petstore.ts';

/**
 * The security table: every operation of the served document, walked from the document itself,
 * is enforced exactly as it declares. Public operations answer without a key; the others answer
 * 401 (with WWW-Authenticate) without a key or with an unknown or revoked one, 403 with a key
 * lacking the declared scope, and neither with a key holding just that scope.
 */

interface DocOperation {
  operationId: string;
  description: string;
  security?: { apiKey?: string[] }[];
  'x-required-scopes'?: string[];
  responses: Record<string, unknown>;
}

const document = petstoreDocument(TEST_DEPRECATION);
const operations = Object.entries(document.paths as Record<string, Record<string, DocOperation>>).flatMap(
  ([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
);

/** A concrete URL for a path template: ids that name nothing (nothing needs to exist, nothing is revoked). */
const urlOf = (path: string) => path.replaceAll(/\{[^}]+\}/g, '999999');

/**
 * The scope an operation declares: none for a public one (`security: []`); otherwise the bearer
 * scheme without scopes (OpenAPI 3.0.3 allows them only for oauth2/OpenID Connect) and the one
 * scope in `x-required-scopes`, also named in the description.
 */
function requiredScope(op: DocOperation): string | null {
  assert.ok(Array.isArray(op.security), `${op.operationId} declares no security`);
  if (op.security.length === 0) {
    assert.equal(op['x-required-scopes'], undefined, `${op.operationId}: public, yet scopes`);
    return null;
  }
  assert.deepEqual(op.security, [{ apiKey: [] }], `${op.operationId}: the bearer scheme, no scopes`);
  const scopes = op['x-required-scopes'];
  assert.ok(scopes && scopes.length === 1, `${op.operationId}: one scope`);
  const scope = scopes[0] as string;
  assert.ok(
    op.description.endsWith(`Needs an API key holding the \`${scope}\` scope.`),
    `${op.operationId}: the description names the scope`,
  );
  return scope;
}

for (const dialect of testDialects()) {
  describe(`security table (${dialect})`, () => {
    let ps: TestPetstore;
    const keyWith = new Map<string, string>();
    const keyWithout = new Map<string, string>();
    let revoked: string;
    before(async () => {
      ps = await startPetstore(dialect);
      for (const scope of SCOPES) {
        const only = await ps.request<{ secret: string }>('POST', '/keys', {
          name: `only ${scope}`,
          scopes: [scope],
        });
        assert.equal(only.status, 201);
        keyWith.set(scope, only.body.secret);
        const others = SCOPES.filter((s) => s !== scope);
        const rest = await ps.request<{ secret: string }>('POST', '/keys', {
          name: `not ${scope}`,
          scopes: others,
        });
        keyWithout.set(scope, rest.body.secret);
      }
      const doomed = await ps.request<{ id: number; secret: string }>('POST', '/keys', {
        name: 'doomed',
        scopes: [...SCOPES],
      });
      revoked = doomed.body.secret;
      assert.equal((await ps.request('DELETE', `/keys/${doomed.body.id}`)).status, 200);
    });
    after(() => ps.close());

    it('covers every operation of the document, public reads of pets and categories only', () => {
      const publicOps = operations
        .filter(({ op }) => requiredScope(op) === null)
        .map(({ op }) => op.operationId);
      assert.deepEqual(publicOps.sort(), ['getCategory', 'getPet', 'listCategories', 'listPets']);
      assert.equal(operations.length, 27);
      const schemes = (document.components as { securitySchemes: Record<string, unknown> }).securitySchemes;
      assert.deepEqual(schemes.apiKey, {
        type: 'http',
        scheme: 'bearer',
        description: 'A Petstore API key (`pk_…`), sent as `Authorization: Bearer <key>`',
      });
    });

    for (const { path, method, op } of operations) {
      it(`${method} ${path} (${op.operationId}) enforces what it declares`, async () => {
        const url = urlOf(path);
        const scope = requiredScope(op);
        const send = async (authorization: string) => {
          const answer = await ps.request(
            method,
            url,
            method === 'POST' || method === 'PUT' ? {} : undefined,
            {
              authorization,
            },
          );
          // The headers the document declares on every answer.
          assert.equal(answer.headers['api-version'], '1.0.0');
          assert.match(String(answer.headers['ratelimit-policy']), /^"(key|address)";q=1000000;w=60$/);
          assert.match(String(answer.headers.ratelimit), /^"(key|address)";r=\d+;t=\d+$/);
          return answer;
        };
        if (scope === null) {
          for (const answer of [await send(''), await send('Bearer pk_unknown')]) {
            assert.ok(
              answer.status !== 401 && answer.status !== 403,
              `${op.operationId} answered ${answer.status}`,
            );
          }
          return;
        }
        const declared = Object.keys(op.responses);
        assert.ok(
          declared.includes('401') && declared.includes('403'),
          `${op.operationId} declares 401 and 403`,
        );
        for (const [authorization, invalid] of [
          ['', false],
          [`Bearer pk_${'x'.repeat(43)}`, true],
          [`Bearer ${revoked}`, true],
          ['Basic dXNlcjpwYXNz', false],
        ] as const) {
          const answer = await send(authorization);
          assert.equal(answer.status, 401, `${op.operationId} with ${JSON.stringify(authorization)}`);
          assert.equal((answer.body as { code: string }).code, 'unauthenticated');
          assert.equal(
            answer.headers['www-authenticate'],
            invalid ? 'Bearer realm="petstore", error="invalid_token"' : 'Bearer realm="petstore"',
          );
        }
        const forbidden = await send(`Bearer ${keyWithout.get(scope)}`);
        assert.equal(forbidden.status, 403);
        assert.equal((forbidden.body as { code: string }).code, 'forbidden');
        assert.equal(
          forbidden.headers['www-authenticate'],
          `Bearer realm="petstore", error="insufficient_scope", scope="${scope}"`,
        );
        const allowed = await send(`Bearer ${keyWith.get(scope)}`);
        assert.ok(
          allowed.status !== 401 && allowed.status !== 403,
          `${op.operationId} answered ${allowed.status}`,
        );
      });
    }

    it('shows a key secret once, stores only its hash and lists keys without secrets', async () => {
      const created = await ps.request<{ id: number; secret: string; prefix: string; scopes: string[] }>(
        'POST',
        '/keys',
        { name: 'shop', scopes: ['store', 'pets:write', 'store'] },
      );
      assert.equal(created.status, 400, 'duplicate scopes are refused');
      const ok = await ps.request<{ id: number; secret: string; prefix: string; scopes: string[] }>(
        'POST',
        '/keys',
        {
          name: 'shop',
          scopes: ['store', 'pets:write'],
        },
      );
      assert.equal(ok.status, 201);
      assert.match(ok.body.secret, /^pk_[A-Za-z0-9_-]{43}$/);
      assert.equal(ok.body.prefix, ok.body.secret.slice(0, 11));
      assert.deepEqual(ok.body.scopes, ['pets:write', 'store']);
      assert.equal(ok.headers['cache-control'], 'no-store');
      const rows = await ps.database.db.selectFrom('api_keys').selectAll().execute();
      assert.ok(
        rows.every((r) => !JSON.stringify(r).includes(ok.body.secret)),
        'the secret is not stored',
      );
      const list = await ps.request<Record<string, unknown>[]>('GET', '/keys');
      assert.ok(list.body.every((k) => !('secret' in k)));
      assert.ok(!list.text.includes(ok.body.secret));
      const missing = await ps.request('DELETE', '/keys/999999');
      assert.equal(missing.status, 404);
      assert.equal((missing.body as { code: string }).code, 'key_not_found');
    });

    it('a key revoked by another process stops working once the key cache time has passed', async () => {
      const created = await ps.request<{ id: number; secret: string }>('POST', '/keys', {
        name: 'elsewhere',
        scopes: ['store'],
      });
      const auth = { authorization: `Bearer ${created.body.secret}` };
      assert.equal((await ps.request('GET', '/store/orders', undefined, auth)).status, 200);
      // Another process sharing the database revokes it: this one's cache does not know yet.
      await ps.database.db
        .updateTable('api_keys')
        .set({ revoked_at: ps.clock.now().toISOString() })
        .where('id', '=', created.body.id)
        .execute();
      ps.clock.advance(9_999);
      assert.equal((await ps.request('GET', '/store/orders', undefined, auth)).status, 200);
      ps.clock.advance(1);
      const refused = await ps.request('GET', '/store/orders', undefined, auth);
      assert.equal(refused.status, 401);
      assert.equal(refused.headers['www-authenticate'], 'Bearer realm="petstore", error="invalid_token"');
    });
  });
}
