import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { parse } from 'yaml';
import { petstoreDocument } from '../../src/petstore/index.ts';
import { testDialects } from '../support/databases.ts';
import { startPetstore, TEST_DEPRECATION, TEST_LIMITS, type TestPetstore } from '../support/petstore.ts';

/**
 * The served OpenAPI document: valid OpenAPI 3.0.3, the same in JSON and YAML, with the seed's
 * schemas, tags and the two named operations' facts, and the deprecation it announces is the one
 * the server applies.
 */

type Field = { type: string; format?: string; items?: string } | { ref: string };
interface SeedObject {
  fields: Record<string, Field>;
  required: string[];
  /** An answer's required list beyond the seed's: every property the service always sends (docs/decisions/petstore.md). */
  answered?: string[];
}

const int64: Field = { type: 'integer', format: 'int64' };
const integer: Field = { type: 'integer' };
const string: Field = { type: 'string' };
const petStatus: Field = { ref: 'PetStatus' };

/** The seed's object tables ("Resources and their fields", "Errors"), plus the project's NewOrder. */
const seedObjects: Record<string, SeedObject> = {
  NewPet: {
    fields: { name: string, categoryId: int64, status: petStatus },
    required: ['name', 'categoryId'],
  },
  Pet: {
    fields: { id: int64, name: string, categoryId: int64, status: petStatus },
    required: ['id', 'name', 'categoryId'],
    answered: ['status'],
  },
  NewCategory: { fields: { name: string, description: string }, required: ['name'] },
  Category: { fields: { id: int64, name: string, description: string }, required: ['id', 'name'] },
  Order: {
    fields: {
      id: int64,
      petId: int64,
      quantity: integer,
      shipDate: { type: 'string', format: 'date-time' },
      complete: { type: 'boolean' },
    },
    required: [],
    answered: ['id', 'petId', 'quantity', 'complete'],
  },
  InventoryItem: {
    fields: { petId: int64, quantity: integer, status: petStatus },
    required: ['petId', 'quantity', 'status'],
  },
  InventoryUpdate: { fields: { quantity: integer }, required: ['quantity'] },
  Error: {
    fields: { code: string, message: string, status: integer },
    required: ['code', 'message', 'status'],
  },
  NewOrder: {
    fields: { petId: int64, quantity: integer, shipDate: { type: 'string', format: 'date-time' } },
    required: ['petId', 'quantity'],
  },
};

const SCHEMA_NAMES = [
  // Issue 3: API keys.
  'Scope',
  'NewApiKey',
  'ApiKey',
  'CreatedApiKey',
  // Issue 3: webhooks.
  'WebhookEventType',
  'WebhookEventFilter',
  'NewWebhookSubscription',
  'WebhookSubscription',
  'CreatedWebhookSubscription',
  'WebhookDelivery',
  'WebhookEvent',
  'PetStatus',
  'NewPet',
  'Pet',
  'Pets',
  'NewCategory',
  'Category',
  'Order',
  'InventoryItem',
  'InventoryUpdate',
  'Error',
  'NewOrder',
];

type Json = Record<string, unknown>;
interface OperationObject {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  deprecated?: boolean;
  [extension: `x-${string}`]: unknown;
}

function operationsOf(document: Json): { method: string; path: string; op: OperationObject }[] {
  const paths = document.paths as Record<string, Record<string, OperationObject>>;
  return Object.entries(paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );
}

const day = (date: Date) => date.toISOString().slice(0, 10);

for (const dialect of testDialects()) {
  describe(`the OpenAPI document (${dialect})`, () => {
    let ps: TestPetstore;
    let document: Json;
    let yamlText: string;
    before(async () => {
      ps = await startPetstore(dialect);
      // Straight through inject: the contract checker only knows the API's own operations.
      const json = await ps.app.inject({ method: 'GET', url: '/openapi.json' });
      assert.equal(json.statusCode, 200);
      assert.equal(json.headers['content-type'], 'application/json; charset=utf-8');
      document = JSON.parse(json.body) as Json;
      const yaml = await ps.app.inject({ method: 'GET', url: '/openapi.yaml' });
      assert.equal(yaml.statusCode, 200);
      assert.equal(yaml.headers['content-type'], 'application/yaml; charset=utf-8');
      yamlText = yaml.body;
    });
    after(() => ps.close());

    it('gives every error answer an example of its own status and one of its codes', () => {
      const paths = document.paths as Record<string, Record<string, { responses: Record<string, Json> }>>;
      let checked = 0;
      for (const item of Object.values(paths)) {
        for (const op of Object.values(item)) {
          for (const [status, response] of Object.entries(op.responses)) {
            const codes = response['x-error-codes'] as string[] | undefined;
            if (!codes) continue;
            const content = response.content as Record<string, { example: { code: string; status: number } }>;
            const example = content['application/json']?.example;
            assert.equal(example?.status, Number(status));
            assert.equal(example?.code, codes[0]);
            checked++;
          }
        }
      }
      assert.ok(checked > 50, `${checked} error answers checked`);
      const getPet = paths['/pets/{petId}']?.get?.responses['404'] as Json;
      assert.deepEqual((getPet.content as Record<string, Json>)['application/json']?.example, {
        code: 'pet_not_found',
        message: 'No pet has this id (it never existed or was deleted).',
        status: 404,
      });
    });

    it('is OpenAPI 3.0.3, interface version 1.0.0', () => {
      assert.equal(document.openapi, '3.0.3');
      assert.equal((document.info as Json).version, '1.0.0');
      assert.equal((document.info as Json).title, 'Petstore API');
    });

    it('is the same document in YAML as in JSON, and the one the operations build', () => {
      assert.deepEqual(parse(yamlText), document);
      assert.deepEqual(document, JSON.parse(JSON.stringify(petstoreDocument(TEST_DEPRECATION, TEST_LIMITS))));
    });

    it('passes an OpenAPI 3.0 validator', async () => {
      const validator = new Validator();
      const result = await validator.validate(structuredClone(document));
      assert.equal(validator.version, '3.0');
      assert.deepEqual(result, { valid: true });
      // The validator does fail a broken document.
      const broken = structuredClone(document);
      delete broken.info;
      const refused = await new Validator().validate(broken);
      assert.equal(refused.valid, false);
    });

    it("has exactly the seed's schemas, plus NewOrder", () => {
      const schemas = (document.components as Json).schemas as Json;
      assert.deepEqual(Object.keys(schemas).sort(), [...SCHEMA_NAMES].sort());
    });

    it('PetStatus is the string enumeration available, pending, sold', () => {
      const schema = ((document.components as Json).schemas as Json).PetStatus as Json;
      assert.equal(schema.type, 'string');
      assert.deepEqual(schema.enum, ['available', 'pending', 'sold']);
    });

    it('Pets is an array of Pet', () => {
      const schema = ((document.components as Json).schemas as Json).Pets as Json;
      assert.equal(schema.type, 'array');
      assert.deepEqual(schema.items, { $ref: '#/components/schemas/Pet' });
    });

    for (const [name, seed] of Object.entries(seedObjects)) {
      it(`${name} has the seed's fields, types, formats and required fields (and what answers always carry)`, () => {
        const schema = ((document.components as Json).schemas as Json)[name] as Json;
        assert.equal(schema.type, 'object');
        const properties = schema.properties as Record<string, Json>;
        assert.deepEqual(Object.keys(properties).sort(), Object.keys(seed.fields).sort());
        assert.deepEqual(
          [...((schema.required as string[] | undefined) ?? [])].sort(),
          [...seed.required, ...(seed.answered ?? [])].sort(),
        );
        for (const [field, expected] of Object.entries(seed.fields)) {
          const actual = properties[field] as Json;
          if ('ref' in expected) {
            assert.deepEqual(actual, { $ref: `#/components/schemas/${expected.ref}` }, `${name}.${field}`);
            continue;
          }
          assert.equal(actual.type, expected.type, `${name}.${field} type`);
          if (expected.format !== undefined) {
            assert.equal(actual.format, expected.format, `${name}.${field} format`);
          } else if (expected.type === 'integer') {
            // The seed names no format: the document may narrow it to int32, nothing else.
            assert.ok(
              actual.format === undefined || actual.format === 'int32',
              `${name}.${field} format ${actual.format}`,
            );
          } else {
            assert.equal(actual.format, undefined, `${name}.${field} format`);
          }
        }
      });
    }

    it('uses the tags Pets and Store, plus Admin for API keys, and only those', () => {
      assert.deepEqual(
        (document.tags as { name: string }[]).map((t) => t.name),
        ['Pets', 'Store', 'Admin'],
      );
      const used = new Set(operationsOf(document).flatMap(({ op }) => op.tags ?? []));
      assert.deepEqual([...used].sort(), ['Admin', 'Pets', 'Store']);
      for (const { method, path, op } of operationsOf(document)) {
        assert.equal(op.tags?.length, 1, `${method} ${path} tags: ${op.tags}`);
      }
    });

    it('every operation has a unique operationId, a summary and a description', () => {
      const operations = operationsOf(document);
      assert.equal(operations.length, 27);
      for (const { method, path, op } of operations) {
        assert.match(op.operationId ?? '', /^[a-z][A-Za-z]+$/, `${method} ${path} operationId`);
        assert.ok((op.summary ?? '').trim().length > 0, `${method} ${path} summary`);
        assert.ok((op.description ?? '').trim().length > 0, `${method} ${path} description`);
      }
      const ids = operations.map(({ op }) => op.operationId);
      assert.equal(new Set(ids).size, ids.length, `duplicate operationIds: ${ids}`);
    });

    it('GET /pets/{petId} is deprecated with an x-sunset date; no other operation is', () => {
      const paths = document.paths as Record<string, Record<string, OperationObject>>;
      const getPet = paths['/pets/{petId}']?.get;
      assert.ok(getPet);
      assert.equal(getPet.deprecated, true);
      assert.match(String(getPet['x-sunset']), /^\d{4}-\d{2}-\d{2}$/);
      assert.equal(getPet['x-sunset'], day(TEST_DEPRECATION.sunsetAt));
      assert.ok(getPet.description?.includes('GET /pets?id={petId}'), 'the description names the successor');
      const deprecated = operationsOf(document)
        .filter(({ op }) => op.deprecated !== undefined || op['x-sunset'] !== undefined)
        .map(({ method, path }) => `${method} ${path}`);
      assert.deepEqual(deprecated, ['GET /pets/{petId}']);
    });

    it('GET /store/orders hides the try-it panel and says why', () => {
      const paths = document.paths as Record<string, Record<string, OperationObject>>;
      const listOrders = paths['/store/orders']?.get;
      assert.ok(listOrders);
      assert.equal(listOrders['x-hideTryItPanel'], true);
      assert.match(listOrders.description ?? '', /interactive testing is disabled/i);
      assert.match(listOrders.description ?? '', /x-hideTryItPanel/);
      // The reason: it is staff's view of every customer's orders.
      assert.match(listOrders.description ?? '', /other people's orders/);
      const hidden = operationsOf(document)
        .filter(({ op }) => op['x-hideTryItPanel'] !== undefined)
        .map(({ method, path }) => `${method} ${path}`);
      assert.deepEqual(hidden, ['GET /store/orders']);
    });
  });

  describe(`GET /pets/{petId} deprecation at run time (${dialect})`, () => {
    let ps: TestPetstore;
    let petId: number;
    let categoryId: number;
    before(async () => {
      ps = await startPetstore(dialect);
      categoryId = (await ps.request<{ id: number }>('POST', '/categories', { name: 'Dogs' })).body.id;
      petId = (await ps.request<{ id: number }>('POST', '/pets', { name: 'Rex', categoryId })).body.id;
    });
    after(() => ps.close());

    const deprecationHeader = `@${Math.floor(TEST_DEPRECATION.deprecatedAt.getTime() / 1000)}`;
    const sunsetHeader = TEST_DEPRECATION.sunsetAt.toUTCString();

    it('answers with Deprecation, Sunset and a successor Link before the sunset', async () => {
      assert.ok(ps.clock.now() < TEST_DEPRECATION.sunsetAt);
      const answer = await ps.request('GET', `/pets/${petId}`);
      assert.equal(answer.status, 200);
      assert.deepEqual(answer.body, { id: petId, name: 'Rex', categoryId, status: 'available' });
      assert.equal(answer.headers.deprecation, deprecationHeader);
      assert.equal(answer.headers.deprecation, '@1793491200');
      assert.equal(answer.headers.sunset, sunsetHeader);
      assert.equal(answer.headers.sunset, 'Wed, 30 Jun 2027 00:00:00 GMT');
      assert.equal(answer.headers.link, `</pets?id=${petId}>; rel="successor-version"`);
    });

    it('still answers the last millisecond before the sunset', async () => {
      ps.clock.set(TEST_DEPRECATION.sunsetAt.getTime() - 1);
      const answer = await ps.request('GET', `/pets/${petId}`);
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.sunset, sunsetHeader);
    });

    it('answers 410 operation_sunset from the sunset on, naming the successor', async () => {
      for (const at of [TEST_DEPRECATION.sunsetAt, new Date('2027-07-01T09:30:00Z')]) {
        ps.clock.set(at);
        const answer = await ps.request<{ code: string; message: string; status: number }>(
          'GET',
          `/pets/${petId}`,
        );
        assert.equal(answer.status, 410);
        assert.deepEqual(answer.body, {
          code: 'operation_sunset',
          message: answer.body.message,
          status: 410,
        });
        assert.match(answer.body.message, new RegExp(`GET /pets\\?id=${petId}`));
        assert.equal(answer.headers.link, `</pets?id=${petId}>; rel="successor-version"`);
        assert.equal(answer.headers.sunset, sunsetHeader);
      }
    });

    it('the successor GET /pets?id= still reads the pet after the sunset, without deprecation headers', async () => {
      ps.clock.set('2027-07-01T09:30:00Z');
      const answer = await ps.request<{ id: number }[]>('GET', `/pets?id=${petId}`);
      assert.equal(answer.status, 200);
      assert.deepEqual(
        answer.body.map((p) => p.id),
        [petId],
      );
      assert.equal(answer.headers.deprecation, undefined);
      assert.equal(answer.headers.sunset, undefined);
    });
  });
}
