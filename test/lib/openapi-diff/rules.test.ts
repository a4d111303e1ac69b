import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { type Change, diffDocuments, hasBreaking, RULES } from '../../../src/lib/openapi-diff/index.ts';
import { SCHEMA_ASPECTS, SCHEMA_PREFIXES } from '../../../src/lib/openapi-diff/rules.ts';

/**
 * The change engine rule by rule: each row is a pair of small documents of our own, the breaking
 * change and the matching addition or relaxation that is not, with the exact changes expected
 * (rule id, level, operation).
 */

type Json = Record<string, unknown>;
const NOW = new Date('2026-06-01T00:00:00Z');

const document = (paths: Json, extra: Json = {}): Json => ({
  openapi: '3.0.3',
  info: { title: 'Pets', version: '1.0.0' },
  paths,
  ...extra,
});
const ok = (schema?: unknown, status = '200') => ({
  responses: {
    [status]: {
      description: 'ok',
      ...(schema === undefined ? {} : { content: { 'application/json': { schema } } }),
    },
  },
});
/** GET /pets/{petId} with these parameters (the path parameter included). */
const withParameters = (...parameters: Json[]) =>
  document({
    '/pets/{petId}': {
      get: {
        parameters: [
          { name: 'petId', in: 'path', required: true, schema: { type: 'string' } },
          ...parameters,
        ],
        ...ok({ type: 'object' }),
      },
    },
  });
const query = (schema: Json, extra: Json = {}) => ({ name: 'limit', in: 'query', schema, ...extra });
/** POST /pets with this JSON request body schema. */
const withRequest = (schema: Json, extra: Json = {}) =>
  document(
    {
      '/pets': {
        post: { requestBody: { required: true, content: { 'application/json': { schema } } }, ...ok() },
      },
    },
    extra,
  );
/** GET /pets answering 200 with this JSON schema. */
const withResponse = (schema: Json, extra: Json = {}) => document({ '/pets': { get: ok(schema) } }, extra);
const object = (properties: Json, required: string[] = []) => ({ type: 'object', properties, required });

interface Row {
  readonly name: string;
  readonly base: Json;
  readonly revision: Json;
  /** `id level` of each change expected, in order. */
  readonly expected: readonly string[];
}

const short = (changes: Change[]) => changes.map((change) => `${change.id} ${change.level}`);

function check(rows: readonly Row[]) {
  for (const row of rows) {
    it(row.name, () => {
      const changes = diffDocuments(row.base, row.revision, { now: NOW });
      assert.deepEqual(short(changes), row.expected);
      assert.equal(
        hasBreaking(changes),
        row.expected.some((line) => line.endsWith(' breaking')),
      );
    });
  }
}

describe('openapi-diff: operations and the lifecycle rule', () => {
  const pets = (get: Json) => document({ '/pets': { get, post: ok() } });
  const onlyPost = document({ '/pets': { post: ok() } });
  check([
    { name: 'identical documents have no changes', base: pets(ok()), revision: pets(ok()), expected: [] },
    {
      name: 'an operation removed without deprecation breaks',
      base: pets(ok()),
      revision: onlyPost,
      expected: ['api-removed-without-deprecation breaking'],
    },
    {
      name: 'an operation added is info',
      base: onlyPost,
      revision: pets(ok()),
      expected: ['endpoint-added info'],
    },
    {
      name: 'a whole path removed reports each of its operations',
      base: document({ '/pets': { get: ok(), post: ok() }, '/toys': { get: ok() } }),
      revision: document({ '/toys': { get: ok() } }),
      expected: ['api-removed-without-deprecation breaking', 'api-removed-without-deprecation breaking'],
    },
    {
      name: 'a deprecated operation removed after its x-sunset is not breaking',
      base: pets({ deprecated: true, 'x-sunset': '2026-01-01', ...ok() }),
      revision: onlyPost,
      expected: ['api-removed-with-deprecation info'],
    },
    {
      name: 'x-deprecated-sunset counts as the sunset date too',
      base: pets({ deprecated: true, 'x-deprecated-sunset': '2026-05-31T23:00:00Z', ...ok() }),
      revision: onlyPost,
      expected: ['api-removed-with-deprecation info'],
    },
    {
      name: 'a deprecated operation removed before its sunset breaks',
      base: pets({ deprecated: true, 'x-sunset': '2026-12-31', ...ok() }),
      revision: onlyPost,
      expected: ['api-removed-before-sunset breaking'],
    },
    {
      name: 'a deprecated operation without a sunset date removed breaks',
      base: pets({ deprecated: true, ...ok() }),
      revision: onlyPost,
      expected: ['api-removed-without-sunset breaking'],
    },
    {
      name: 'a sunset date without deprecated: true does not allow removal',
      base: pets({ 'x-sunset': '2026-01-01', ...ok() }),
      revision: onlyPost,
      expected: ['api-removed-without-deprecation breaking'],
    },
    {
      name: 'deprecating an operation is info',
      base: pets(ok()),
      revision: pets({ deprecated: true, ...ok() }),
      expected: ['endpoint-deprecated info'],
    },
    {
      name: 'un-deprecating an operation is info',
      base: pets({ deprecated: true, ...ok() }),
      revision: pets(ok()),
      expected: ['endpoint-reactivated info'],
    },
    {
      name: 'moving a sunset date earlier breaks',
      base: pets({ deprecated: true, 'x-sunset': '2027-01-01', ...ok() }),
      revision: pets({ deprecated: true, 'x-sunset': '2026-09-01', ...ok() }),
      expected: ['api-sunset-date-changed-too-small breaking'],
    },
    {
      name: 'moving a sunset date later is no change',
      base: pets({ deprecated: true, 'x-sunset': '2026-09-01', ...ok() }),
      revision: pets({ deprecated: true, 'x-sunset': '2027-01-01', ...ok() }),
      expected: [],
    },
    {
      name: 'renaming a path parameter ({id} to {petId}) is not a removal',
      base: document({
        '/pets/{id}': {
          get: {
            parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
            ...ok(),
          },
        },
      }),
      revision: document({
        '/pets/{petId}': {
          get: {
            parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'string' } }],
            ...ok(),
          },
        },
      }),
      expected: [],
    },
  ]);
});

describe('openapi-diff: parameters', () => {
  const none = withParameters();
  check([
    {
      name: 'a new required parameter breaks',
      base: none,
      revision: withParameters(query({ type: 'integer' }, { required: true })),
      expected: ['new-required-request-parameter breaking'],
    },
    {
      name: 'a new optional parameter is info',
      base: none,
      revision: withParameters(query({ type: 'integer' })),
      expected: ['new-optional-request-parameter info'],
    },
    {
      name: 'a removed parameter is a warning',
      base: withParameters(query({ type: 'integer' })),
      revision: none,
      expected: ['request-parameter-removed warning'],
    },
    {
      name: 'a parameter that became required breaks',
      base: withParameters(query({ type: 'integer' })),
      revision: withParameters(query({ type: 'integer' }, { required: true })),
      expected: ['request-parameter-became-required breaking'],
    },
    {
      name: 'a parameter that became optional is info',
      base: withParameters(query({ type: 'integer' }, { required: true })),
      revision: withParameters(query({ type: 'integer' })),
      expected: ['request-parameter-became-optional info'],
    },
    {
      name: 'a parameter type narrowed (number to integer) breaks',
      base: withParameters(query({ type: 'number' })),
      revision: withParameters(query({ type: 'integer' })),
      expected: ['request-parameter-type-specialized breaking'],
    },
    {
      name: 'a parameter type widened (integer to number) is info',
      base: withParameters(query({ type: 'integer' })),
      revision: withParameters(query({ type: 'number' })),
      expected: ['request-parameter-type-generalized info'],
    },
    {
      name: 'a parameter type replaced (integer to boolean) breaks',
      base: withParameters(query({ type: 'integer' })),
      revision: withParameters(query({ type: 'boolean' })),
      expected: ['request-parameter-type-changed breaking'],
    },
    {
      name: 'a parameter enum value removed breaks',
      base: withParameters(query({ type: 'string', enum: ['a', 'b'] })),
      revision: withParameters(query({ type: 'string', enum: ['a'] })),
      expected: ['request-parameter-enum-value-removed breaking'],
    },
    {
      name: 'a parameter enum value added is info',
      base: withParameters(query({ type: 'string', enum: ['a'] })),
      revision: withParameters(query({ type: 'string', enum: ['a', 'b'] })),
      expected: ['request-parameter-enum-value-added info'],
    },
    {
      name: 'a parameter that became an enum breaks',
      base: withParameters(query({ type: 'string' })),
      revision: withParameters(query({ type: 'string', enum: ['a'] })),
      expected: ['request-parameter-became-enum breaking'],
    },
    {
      name: 'a parameter pattern added breaks',
      base: withParameters(query({ type: 'string' })),
      revision: withParameters(query({ type: 'string', pattern: '^[a-z]+$' })),
      expected: ['request-parameter-pattern-added breaking'],
    },
    {
      name: 'a parameter pattern removed is info',
      base: withParameters(query({ type: 'string', pattern: '^[a-z]+$' })),
      revision: withParameters(query({ type: 'string' })),
      expected: ['request-parameter-pattern-removed info'],
    },
    {
      name: 'a parameter pattern rewritten is a warning',
      base: withParameters(query({ type: 'string', pattern: '^[a-z]+$' })),
      revision: withParameters(query({ type: 'string', pattern: '^[a-z0-9]+$' })),
      expected: ['request-parameter-pattern-changed warning'],
    },
    {
      name: 'a parameter maximum decreased and minimum increased break',
      base: withParameters(query({ type: 'integer', minimum: 1, maximum: 100 })),
      revision: withParameters(query({ type: 'integer', minimum: 5, maximum: 50 })),
      expected: ['request-parameter-min-increased breaking', 'request-parameter-max-decreased breaking'],
    },
    {
      name: 'a parameter maximum increased and minimum dropped are info',
      base: withParameters(query({ type: 'integer', minimum: 1, maximum: 50 })),
      revision: withParameters(query({ type: 'integer', maximum: 100 })),
      expected: ['request-parameter-min-unset info', 'request-parameter-max-increased info'],
    },
    {
      name: 'a parameter maxLength set breaks',
      base: withParameters(query({ type: 'string' })),
      revision: withParameters(query({ type: 'string', maxLength: 10 })),
      expected: ['request-parameter-max-length-set breaking'],
    },
    {
      name: 'a parameter defined in components and used by $ref is compared',
      base: document(
        { '/pets': { get: { parameters: [{ $ref: '#/components/parameters/Limit' }], ...ok() } } },
        { components: { parameters: { Limit: query({ type: 'integer', maximum: 100 }) } } },
      ),
      revision: document(
        { '/pets': { get: { parameters: [{ $ref: '#/components/parameters/Limit' }], ...ok() } } },
        { components: { parameters: { Limit: query({ type: 'integer', maximum: 10 }) } } },
      ),
      expected: ['request-parameter-max-decreased breaking'],
    },
    {
      name: 'a path-level parameter is compared for each operation',
      base: document({ '/pets': { parameters: [query({ type: 'integer' })], get: ok(), post: ok() } }),
      revision: document({
        '/pets': { parameters: [query({ type: 'integer' }, { required: true })], get: ok(), post: ok() },
      }),
      expected: ['request-parameter-became-required breaking', 'request-parameter-became-required breaking'],
    },
  ]);
});

describe('openapi-diff: request bodies', () => {
  const pet = object({ name: { type: 'string' }, tag: { type: 'string' } }, ['name']);
  check([
    {
      name: 'a request property that became required breaks',
      base: withRequest(pet),
      revision: withRequest(object({ name: { type: 'string' }, tag: { type: 'string' } }, ['name', 'tag'])),
      expected: ['request-property-became-required breaking'],
    },
    {
      name: 'a request property that became optional is info',
      base: withRequest(pet),
      revision: withRequest(object({ name: { type: 'string' }, tag: { type: 'string' } })),
      expected: ['request-property-became-optional info'],
    },
    {
      name: 'a new required request property breaks',
      base: withRequest(pet),
      revision: withRequest(
        object({ name: { type: 'string' }, tag: { type: 'string' }, age: { type: 'integer' } }, [
          'name',
          'age',
        ]),
      ),
      expected: ['new-required-request-property breaking'],
    },
    {
      name: 'a new optional request property is info',
      base: withRequest(pet),
      revision: withRequest(
        object({ name: { type: 'string' }, tag: { type: 'string' }, age: { type: 'integer' } }, ['name']),
      ),
      expected: ['new-optional-request-property info'],
    },
    {
      name: 'a removed request property is a warning',
      base: withRequest(pet),
      revision: withRequest(object({ name: { type: 'string' } }, ['name'])),
      expected: ['request-property-removed warning'],
    },
    {
      name: 'a new required read-only property is no change for requests',
      base: withRequest(pet),
      revision: withRequest(
        object(
          { name: { type: 'string' }, tag: { type: 'string' }, id: { type: 'string', readOnly: true } },
          ['name', 'id'],
        ),
      ),
      expected: [],
    },
    {
      name: 'a nested request property narrowed (maxLength decreased) breaks',
      base: withRequest(object({ owner: object({ name: { type: 'string', maxLength: 100 } }) })),
      revision: withRequest(object({ owner: object({ name: { type: 'string', maxLength: 50 } }) })),
      expected: ['request-property-max-length-decreased breaking'],
    },
    {
      name: 'an array item narrowed (minItems set, items enum value removed) breaks',
      base: withRequest(object({ tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } } })),
      revision: withRequest(
        object({ tags: { type: 'array', minItems: 1, items: { type: 'string', enum: ['a'] } } }),
      ),
      expected: ['request-property-min-items-set breaking', 'request-property-enum-value-removed breaking'],
    },
    {
      name: 'writing the type: object a schema with properties meant is no change',
      base: withRequest({ properties: { name: { type: 'string' } } }),
      revision: withRequest({ type: 'object', properties: { name: { type: 'string' } } }),
      expected: [],
    },
    {
      name: 'a request property that can no longer be null breaks',
      base: withRequest(object({ tag: { type: 'string', nullable: true } })),
      revision: withRequest(object({ tag: { type: 'string' } })),
      expected: ['request-property-became-not-nullable breaking'],
    },
    {
      name: 'a request property that became nullable is info',
      base: withRequest(object({ tag: { type: 'string' } })),
      revision: withRequest(object({ tag: { type: ['string', 'null'] } })),
      expected: ['request-property-became-nullable info'],
    },
    {
      name: 'a request media type removed breaks',
      base: document({
        '/pets': {
          post: {
            requestBody: {
              content: { 'application/json': { schema: pet }, 'application/xml': { schema: pet } },
            },
            ...ok(),
          },
        },
      }),
      revision: document({
        '/pets': { post: { requestBody: { content: { 'application/json': { schema: pet } } }, ...ok() } },
      }),
      expected: ['request-body-media-type-removed breaking'],
    },
    {
      name: 'a request media type added is info',
      base: document({
        '/pets': { post: { requestBody: { content: { 'application/json': { schema: pet } } }, ...ok() } },
      }),
      revision: document({
        '/pets': {
          post: {
            requestBody: {
              content: { 'application/json': { schema: pet }, 'application/xml': { schema: pet } },
            },
            ...ok(),
          },
        },
      }),
      expected: ['request-body-media-type-added info'],
    },
    {
      name: 'a required request body added breaks',
      base: document({ '/pets': { post: ok() } }),
      revision: withRequest(pet),
      expected: ['added-required-request-body breaking'],
    },
    {
      name: 'an optional request body added is info',
      base: document({ '/pets': { post: ok() } }),
      revision: document({
        '/pets': { post: { requestBody: { content: { 'application/json': { schema: pet } } }, ...ok() } },
      }),
      expected: ['added-optional-request-body info'],
    },
    {
      name: 'a request body removed breaks',
      base: withRequest(pet),
      revision: document({ '/pets': { post: ok() } }),
      expected: ['request-body-removed breaking'],
    },
    {
      name: 'a request body that became required breaks',
      base: document({
        '/pets': { post: { requestBody: { content: { 'application/json': { schema: pet } } }, ...ok() } },
      }),
      revision: withRequest(pet),
      expected: ['request-body-became-required breaking'],
    },
  ]);
});

describe('openapi-diff: responses', () => {
  const pet = object(
    {
      id: { type: 'string' },
      name: { type: 'string' },
      status: { type: 'string', enum: ['available', 'sold'] },
    },
    ['id', 'name'],
  );
  check([
    {
      name: 'a response property that became optional breaks',
      base: withResponse(pet),
      revision: withResponse(
        object(
          {
            id: { type: 'string' },
            name: { type: 'string' },
            status: { type: 'string', enum: ['available', 'sold'] },
          },
          ['id'],
        ),
      ),
      expected: ['response-property-became-optional breaking'],
    },
    {
      name: 'a response property that became required is info',
      base: withResponse(pet),
      revision: withResponse(
        object(
          {
            id: { type: 'string' },
            name: { type: 'string' },
            status: { type: 'string', enum: ['available', 'sold'] },
          },
          ['id', 'name', 'status'],
        ),
      ),
      expected: ['response-property-became-required info'],
    },
    {
      name: 'a required response property removed breaks',
      base: withResponse(pet),
      revision: withResponse(
        object({ id: { type: 'string' }, status: { type: 'string', enum: ['available', 'sold'] } }, ['id']),
      ),
      expected: ['response-required-property-removed breaking'],
    },
    {
      name: 'an optional response property removed is a warning',
      base: withResponse(pet),
      revision: withResponse(object({ id: { type: 'string' }, name: { type: 'string' } }, ['id', 'name'])),
      expected: ['response-optional-property-removed warning'],
    },
    {
      name: 'a new response property is info',
      base: withResponse(pet),
      revision: withResponse(
        object(
          {
            id: { type: 'string' },
            name: { type: 'string' },
            status: { type: 'string', enum: ['available', 'sold'] },
            age: { type: 'integer' },
          },
          ['id', 'name'],
        ),
      ),
      expected: ['response-optional-property-added info'],
    },
    {
      name: 'a new response enum value breaks (callers may not know it)',
      base: withResponse(pet),
      revision: withResponse(
        object(
          {
            id: { type: 'string' },
            name: { type: 'string' },
            status: { type: 'string', enum: ['available', 'sold', 'lost'] },
          },
          ['id', 'name'],
        ),
      ),
      expected: ['response-property-enum-value-added breaking'],
    },
    {
      name: 'a response enum value removed is info',
      base: withResponse(pet),
      revision: withResponse(
        object(
          {
            id: { type: 'string' },
            name: { type: 'string' },
            status: { type: 'string', enum: ['available'] },
          },
          ['id', 'name'],
        ),
      ),
      expected: ['response-property-enum-value-removed info'],
    },
    {
      name: 'a response property that became nullable breaks',
      base: withResponse(object({ name: { type: 'string' } })),
      revision: withResponse(object({ name: { type: 'string', nullable: true } })),
      expected: ['response-property-became-nullable breaking'],
    },
    {
      name: 'a response type widened (integer to number) breaks',
      base: withResponse(object({ age: { type: 'integer' } })),
      revision: withResponse(object({ age: { type: 'number' } })),
      expected: ['response-property-type-generalized breaking'],
    },
    {
      name: 'a response type narrowed (number to integer) is info',
      base: withResponse(object({ age: { type: 'number' } })),
      revision: withResponse(object({ age: { type: 'integer' } })),
      expected: ['response-property-type-specialized info'],
    },
    {
      name: 'a response body type replaced (object to array) breaks',
      base: withResponse({ type: 'object' }),
      revision: withResponse({ type: 'array', items: { type: 'object' } }),
      expected: ['response-body-type-changed breaking'],
    },
    {
      name: 'a response maxLength increased breaks, decreased is info',
      base: withResponse(
        object({ name: { type: 'string', maxLength: 50 }, tag: { type: 'string', maxLength: 50 } }),
      ),
      revision: withResponse(
        object({ name: { type: 'string', maxLength: 100 }, tag: { type: 'string', maxLength: 20 } }),
      ),
      expected: [
        'response-property-max-length-increased breaking',
        'response-property-max-length-decreased info',
      ],
    },
    {
      name: 'a success status removed breaks',
      base: document({
        '/pets': { get: { responses: { 200: { description: 'ok' }, 404: { description: 'no' } } } },
      }),
      revision: document({ '/pets': { get: { responses: { 404: { description: 'no' } } } } }),
      expected: ['response-success-status-removed breaking'],
    },
    {
      name: 'an error status removed or a status added is info',
      base: document({
        '/pets': { get: { responses: { 200: { description: 'ok' }, 404: { description: 'no' } } } },
      }),
      revision: document({
        '/pets': { get: { responses: { 200: { description: 'ok' }, 201: { description: 'ok' } } } },
      }),
      expected: ['response-success-status-added info', 'response-non-success-status-removed info'],
    },
    {
      name: 'a response media type removed breaks',
      base: document({
        '/pets': {
          get: {
            responses: {
              200: {
                description: 'ok',
                content: { 'application/json': { schema: pet }, 'text/csv': { schema: { type: 'string' } } },
              },
            },
          },
        },
      }),
      revision: withResponse(pet),
      expected: ['response-media-type-removed breaking'],
    },
    {
      name: 'a response media type added is info',
      base: withResponse(pet),
      revision: document({
        '/pets': {
          get: {
            responses: {
              200: {
                description: 'ok',
                content: { 'application/json': { schema: pet }, 'text/csv': { schema: { type: 'string' } } },
              },
            },
          },
        },
      }),
      expected: ['response-media-type-added info'],
    },
    {
      name: 'response headers: required removed and became optional break, optional removed warns, added is info',
      base: document({
        '/pets': {
          get: {
            responses: {
              200: {
                description: 'ok',
                headers: {
                  'X-Rate': { required: true, schema: { type: 'integer' } },
                  'X-Page': { required: true, schema: { type: 'integer' } },
                  'X-Trace': { schema: { type: 'string' } },
                },
              },
            },
          },
        },
      }),
      revision: document({
        '/pets': {
          get: {
            responses: {
              200: {
                description: 'ok',
                headers: {
                  'x-page': { schema: { type: 'integer' } },
                  'X-New': { schema: { type: 'string' } },
                },
              },
            },
          },
        },
      }),
      expected: [
        'response-header-became-optional breaking',
        'response-header-added info',
        'required-response-header-removed breaking',
        'optional-response-header-removed warning',
      ],
    },
  ]);
});

describe('openapi-diff: composition and discriminators', () => {
  const components = (schemas: Json) => ({ components: { schemas } });
  const cat = object({ kind: { type: 'string' }, meows: { type: 'boolean' } }, ['kind']);
  const dog = object({ kind: { type: 'string' }, barks: { type: 'boolean' } }, ['kind']);
  const bird = object({ kind: { type: 'string' }, sings: { type: 'boolean' } }, ['kind']);
  const oneOf = (...names: string[]) => ({
    oneOf: names.map((name) => ({ $ref: `#/components/schemas/${name}` })),
  });
  check([
    {
      name: 'a oneOf alternative added to a response breaks',
      base: withResponse(oneOf('Cat', 'Dog'), components({ Cat: cat, Dog: dog, Bird: bird })),
      revision: withResponse(oneOf('Cat', 'Dog', 'Bird'), components({ Cat: cat, Dog: dog, Bird: bird })),
      expected: ['response-body-one-of-added breaking'],
    },
    {
      name: 'a oneOf alternative removed from a response is info',
      base: withResponse(oneOf('Cat', 'Dog'), components({ Cat: cat, Dog: dog })),
      revision: withResponse(oneOf('Cat'), components({ Cat: cat, Dog: dog })),
      expected: ['response-body-one-of-removed info'],
    },
    {
      name: 'a oneOf alternative removed from a request breaks',
      base: withRequest(oneOf('Cat', 'Dog'), components({ Cat: cat, Dog: dog })),
      revision: withRequest(oneOf('Cat'), components({ Cat: cat, Dog: dog })),
      expected: ['request-body-one-of-removed breaking'],
    },
    {
      name: 'a oneOf alternative added to a request is info',
      base: withRequest(oneOf('Cat'), components({ Cat: cat, Dog: dog })),
      revision: withRequest(oneOf('Cat', 'Dog'), components({ Cat: cat, Dog: dog })),
      expected: ['request-body-one-of-added info'],
    },
    {
      name: 'an anyOf alternative added to a response property breaks',
      base: withResponse(object({ value: { anyOf: [{ type: 'string' }] } })),
      revision: withResponse(object({ value: { anyOf: [{ type: 'string' }, { type: 'integer' }] } })),
      expected: ['response-property-any-of-added breaking'],
    },
    {
      name: 'a change inside a oneOf alternative is found',
      base: withResponse(oneOf('Cat', 'Dog'), components({ Cat: cat, Dog: dog })),
      revision: withResponse(
        oneOf('Cat', 'Dog'),
        components({ Cat: object({ kind: { type: 'string' }, meows: { type: 'boolean' } }), Dog: dog }),
      ),
      expected: ['response-property-became-optional breaking'],
    },
    {
      name: 'moving properties into an allOf base schema is no change',
      base: withResponse(object({ id: { type: 'string' }, name: { type: 'string' } }, ['id', 'name'])),
      revision: withResponse(
        { allOf: [{ $ref: '#/components/schemas/Base' }, object({ name: { type: 'string' } }, ['name'])] },
        components({ Base: object({ id: { type: 'string' } }, ['id']) }),
      ),
      expected: [],
    },
    {
      name: 'an allOf member that adds a required request property breaks',
      base: withRequest(
        { allOf: [{ $ref: '#/components/schemas/Base' }] },
        components({ Base: object({ id: { type: 'string' } }) }),
      ),
      revision: withRequest(
        { allOf: [{ $ref: '#/components/schemas/Base' }, object({ name: { type: 'string' } }, ['name'])] },
        components({ Base: object({ id: { type: 'string' } }) }),
      ),
      expected: ['new-required-request-property breaking'],
    },
    {
      name: 'an allOf member with its own alternatives added to a request breaks',
      base: withRequest({ allOf: [object({ id: { type: 'string' } })] }),
      revision: withRequest({
        allOf: [
          object({ id: { type: 'string' } }),
          { oneOf: [{ required: ['id'] }, { required: ['name'] }] },
        ],
      }),
      expected: ['request-body-all-of-added breaking'],
    },
    {
      name: "a discriminator's property name changed breaks",
      base: withResponse(
        { ...oneOf('Cat', 'Dog'), discriminator: { propertyName: 'kind' } },
        components({ Cat: cat, Dog: dog }),
      ),
      revision: withResponse(
        { ...oneOf('Cat', 'Dog'), discriminator: { propertyName: 'type' } },
        components({ Cat: cat, Dog: dog }),
      ),
      expected: ['response-body-discriminator-property-name-changed breaking'],
    },
    {
      name: 'a discriminator mapping value added to a response breaks, to a request is info',
      base: document(
        {
          '/pets': {
            get: ok({
              ...oneOf('Cat'),
              discriminator: { propertyName: 'kind', mapping: { cat: '#/components/schemas/Cat' } },
            }),
            post: {
              requestBody: {
                content: {
                  'application/json': {
                    schema: {
                      ...oneOf('Cat'),
                      discriminator: { propertyName: 'kind', mapping: { cat: '#/components/schemas/Cat' } },
                    },
                  },
                },
              },
              ...ok(),
            },
          },
        },
        components({ Cat: cat, Dog: dog }),
      ),
      revision: document(
        {
          '/pets': {
            get: ok({
              ...oneOf('Cat', 'Dog'),
              discriminator: {
                propertyName: 'kind',
                mapping: { cat: '#/components/schemas/Cat', dog: '#/components/schemas/Dog' },
              },
            }),
            post: {
              requestBody: {
                content: {
                  'application/json': {
                    schema: {
                      ...oneOf('Cat', 'Dog'),
                      discriminator: {
                        propertyName: 'kind',
                        mapping: { cat: '#/components/schemas/Cat', dog: '#/components/schemas/Dog' },
                      },
                    },
                  },
                },
              },
              ...ok(),
            },
          },
        },
        components({ Cat: cat, Dog: dog }),
      ),
      expected: [
        'response-body-discriminator-mapping-added breaking',
        'response-body-one-of-added breaking',
        'request-body-discriminator-mapping-added info',
        'request-body-one-of-added info',
      ],
    },
    {
      name: 'a recursive schema is compared without looping, and a deep change is found',
      base: withResponse(
        { $ref: '#/components/schemas/Node' },
        components({
          Node: object(
            {
              name: { type: 'string' },
              children: { type: 'array', items: { $ref: '#/components/schemas/Node' } },
            },
            ['name'],
          ),
        }),
      ),
      revision: withResponse(
        { $ref: '#/components/schemas/Node' },
        components({
          Node: object({
            name: { type: 'string' },
            children: { type: 'array', items: { $ref: '#/components/schemas/Node' } },
          }),
        }),
      ),
      expected: ['response-property-became-optional breaking'],
    },
    {
      name: 'a changed component is reported for every operation that uses it, at its own path',
      base: document(
        {
          '/pets': { get: ok({ $ref: '#/components/schemas/Pet' }) },
          '/owners': { get: ok(object({ pet: { $ref: '#/components/schemas/Pet' } })) },
        },
        components({ Pet: { ...cat, required: ['kind', 'meows'] } }),
      ),
      revision: document(
        {
          '/pets': { get: ok({ $ref: '#/components/schemas/Pet' }) },
          '/owners': { get: ok(object({ pet: { $ref: '#/components/schemas/Pet' } })) },
        },
        components({ Pet: cat }),
      ),
      expected: ['response-property-became-optional breaking', 'response-property-became-optional breaking'],
    },
    {
      name: 'a recursive schema reached from two operations reports its change in both',
      base: document(
        {
          '/trees': { get: ok({ $ref: '#/components/schemas/Node' }) },
          '/forests': { get: ok({ type: 'array', items: { $ref: '#/components/schemas/Node' } }) },
        },
        components({
          Node: object(
            {
              name: { type: 'string' },
              children: { type: 'array', items: { $ref: '#/components/schemas/Node' } },
            },
            ['name'],
          ),
        }),
      ),
      revision: document(
        {
          '/trees': { get: ok({ $ref: '#/components/schemas/Node' }) },
          '/forests': { get: ok({ type: 'array', items: { $ref: '#/components/schemas/Node' } }) },
        },
        components({
          Node: object({
            name: { type: 'string' },
            children: { type: 'array', items: { $ref: '#/components/schemas/Node' } },
          }),
        }),
      ),
      expected: ['response-property-became-optional breaking', 'response-property-became-optional breaking'],
    },
    {
      name: "3.1's type list with null equals 3.0's nullable",
      base: withResponse(object({ name: { type: 'string', nullable: true } })),
      revision: { ...withResponse(object({ name: { type: ['string', 'null'] } })), openapi: '3.1.0' },
      expected: [],
    },
  ]);
});

describe('openapi-diff: security', () => {
  const schemes = {
    components: {
      securitySchemes: {
        key: { type: 'apiKey', in: 'header', name: 'X-Key' },
        oauth: { type: 'oauth2', flows: {} },
      },
    },
  };
  const secured = (security: unknown, extra: Json = {}) =>
    document(
      { '/pets': { get: { ...(security === undefined ? {} : { security }), ...ok() } } },
      { ...schemes, ...extra },
    );
  check([
    {
      name: 'security added to an open operation breaks',
      base: secured(undefined),
      revision: secured([{ key: [] }]),
      expected: ['api-authentication-required breaking'],
    },
    {
      name: 'security removed from an operation is info',
      base: secured([{ key: [] }]),
      revision: secured(undefined),
      expected: ['api-authentication-optional info'],
    },
    {
      name: 'a security alternative removed breaks',
      base: secured([{ key: [] }, { oauth: [] }]),
      revision: secured([{ key: [] }]),
      expected: ['api-security-removed breaking'],
    },
    {
      name: 'a security alternative added is info',
      base: secured([{ key: [] }]),
      revision: secured([{ key: [] }, { oauth: [] }]),
      expected: ['api-security-added info'],
    },
    {
      name: 'a scope added breaks',
      base: secured([{ oauth: ['read'] }]),
      revision: secured([{ oauth: ['read', 'write'] }]),
      expected: ['api-security-scope-added breaking'],
    },
    {
      name: 'a scope removed is info',
      base: secured([{ oauth: ['read', 'write'] }]),
      revision: secured([{ oauth: ['read'] }]),
      expected: ['api-security-scope-removed info'],
    },
    {
      name: 'security added at the top of the document applies to operations without their own',
      base: secured(undefined),
      revision: secured(undefined, { security: [{ key: [] }] }),
      expected: ['api-authentication-required breaking'],
    },
    {
      name: 'an empty requirement keeps anonymous calls allowed',
      base: secured(undefined),
      revision: secured([{}, { key: [] }]),
      expected: [],
    },
  ]);
});

describe('openapi-diff: what a change says', () => {
  it('says at which path a shared component changed, for each operation', () => {
    const pet = object({ id: { type: 'string' }, name: { type: 'string' } }, ['id', 'name']);
    const paths = {
      '/pets': { get: ok({ type: 'array', items: { $ref: '#/components/schemas/Pet' } }) },
      '/owners/{id}': {
        get: ok(object({ pets: { type: 'array', items: { $ref: '#/components/schemas/Pet' } } })),
      },
    };
    const changes = diffDocuments(
      document(paths, { components: { schemas: { Pet: pet } } }),
      document(paths, { components: { schemas: { Pet: { ...pet, required: ['id'] } } } }),
    );
    assert.deepEqual(
      changes.map((c) => [c.operation, c.message]),
      [
        [
          'GET /pets',
          'Property `[].name` of the 200 response (application/json) became optional: it may be missing.',
        ],
        [
          'GET /owners/{id}',
          'Property `pets[].name` of the 200 response (application/json) became optional: it may be missing.',
        ],
      ],
    );
  });

  it('names the rule, level, operation, place and a sentence', () => {
    const base = withRequest(
      object({ name: { type: 'string' }, owner: { $ref: '#/components/schemas/Owner' } }),
      {
        components: { schemas: { Owner: object({ email: { type: 'string' } }) } },
      },
    );
    const revision = withRequest(
      object({ name: { type: 'string' }, owner: { $ref: '#/components/schemas/Owner' } }),
      {
        components: { schemas: { Owner: object({ email: { type: 'string' } }, ['email']) } },
      },
    );
    assert.deepEqual(diffDocuments(base, revision), [
      {
        id: 'request-property-became-required',
        level: 'breaking',
        operation: 'POST /pets',
        location: '/components/schemas/Owner/properties/email',
        message: 'Property `owner.email` of the request body (application/json) became required.',
      },
    ]);
  });

  it('points removals into the base, with the operation as the base wrote it', () => {
    const base = document({ '/pets/{id}': { delete: ok() } });
    assert.deepEqual(diffDocuments(base, document({})), [
      {
        id: 'api-removed-without-deprecation',
        level: 'breaking',
        operation: 'DELETE /pets/{id}',
        location: '/paths/~1pets~1{id}/delete',
        message: 'DELETE /pets/{id} was removed without being deprecated first.',
      },
    ]);
  });

  it('uses the current time for the sunset rule unless told', () => {
    const base = document({ '/old': { get: { deprecated: true, 'x-sunset': '2000-01-01', ...ok() } } });
    assert.deepEqual(short(diffDocuments(base, document({}))), ['api-removed-with-deprecation info']);
    assert.deepEqual(short(diffDocuments(base, document({}), { now: new Date('1999-01-01') })), [
      'api-removed-before-sunset breaking',
    ]);
  });

  it('reports a change deep in a shared schema once, however many paths lead to it', () => {
    // Level i refers to level i+1 twice: 2^24 paths lead to the leaf.
    const levels = 24;
    const schemas = (leafRequired: string[]) =>
      Object.fromEntries(
        Array.from({ length: levels + 1 }, (_, i) => [
          `L${i}`,
          i === levels
            ? object({ name: { type: 'string' } }, leafRequired)
            : object({
                a: { $ref: `#/components/schemas/L${i + 1}` },
                b: { $ref: `#/components/schemas/L${i + 1}` },
              }),
        ]),
      );
    const at = (required: string[]) =>
      withResponse({ $ref: '#/components/schemas/L0' }, { components: { schemas: schemas(required) } });
    const changes = diffDocuments(at(['name']), at([]));
    assert.deepEqual(short(changes), ['response-property-became-optional breaking']);
    assert.equal(
      changes[0]?.message.startsWith(`Property \`${'a.'.repeat(levels)}name\``),
      true,
      changes[0]?.message,
    );
  });

  it('matches media types without their parameters', () => {
    const typed = (type: string) =>
      document({
        '/pets': {
          get: {
            responses: { 200: { description: 'ok', content: { [type]: { schema: { type: 'object' } } } } },
          },
        },
      });
    assert.deepEqual(diffDocuments(typed('application/json; charset=utf-8'), typed('Application/JSON')), []);
  });

  it('survives refs that lead nowhere or round in a circle', () => {
    const broken = withResponse(
      { $ref: '#/components/schemas/Missing' },
      {
        components: {
          schemas: { A: { $ref: '#/components/schemas/B' }, B: { $ref: '#/components/schemas/A' } },
        },
      },
    );
    const circular = withResponse(
      { $ref: '#/components/schemas/A' },
      {
        components: {
          schemas: { A: { $ref: '#/components/schemas/B' }, B: { $ref: '#/components/schemas/A' } },
        },
      },
    );
    assert.deepEqual(diffDocuments(broken, circular), []);
  });

  it('documents every rule in docs/changes.md', () => {
    const docs = readFileSync(new URL('../../../docs/changes.md', import.meta.url), 'utf8');
    const schemaIds = new Set(
      Object.keys(SCHEMA_PREFIXES).flatMap((prefix) =>
        Object.keys(SCHEMA_ASPECTS).map((aspect) => `${prefix}-${aspect}`),
      ),
    );
    for (const id of Object.keys(RULES)) {
      if (schemaIds.has(id)) continue;
      assert.ok(
        docs.includes(`| \`${id}\` | ${RULES[id]?.level} |`),
        `docs/changes.md lists ${id} as ${RULES[id]?.level}`,
      );
    }
    for (const aspect of Object.keys(SCHEMA_ASPECTS)) assert.ok(docs.includes(`| \`${aspect}\` |`), aspect);
    for (const prefix of Object.keys(SCHEMA_PREFIXES)) assert.ok(docs.includes(`\`${prefix}-\``), prefix);
  });

  it('every rule has a level and a trigger', () => {
    for (const [id, rule] of Object.entries(RULES)) {
      assert.match(id, /^[a-z0-9]+(-[a-z0-9]+)*$/);
      assert.ok(['breaking', 'warning', 'info'].includes(rule.level), id);
      assert.ok(rule.trigger.length > 10, id);
    }
  });
});
