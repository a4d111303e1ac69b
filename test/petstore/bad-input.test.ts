import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { petstoreDocument } from '../../src/petstore/index.ts';
import { testDialects } from '../support/databases.ts';
import { startPetstore, TEST_DEPRECATION, type TestPetstore } from '../support/petstore.ts';

/**
 * Bad requests of every kind: each must get the exact status and `{ code, message, status }`
 * body, with a code the operation documents for that status, and must leave every table as it
 * was.
 */

interface Fixture {
  category: number;
  pet: number;
  order: number;
}

interface Case {
  name: string;
  method: string;
  /** `{pet}`, `{category}` and `{order}` are replaced with the fixture's ids. */
  url: string;
  /** Sent as JSON by `request()` (Content-Type: application/json). */
  body?: unknown;
  /** Sent as is; `{pet}`… are replaced too. */
  raw?: string;
  /** Content-Type for `raw`: application/json unless given; null sends none. */
  type?: string | null;
  status: number;
  code: string;
  /** What the message must say (besides being non-empty). */
  message?: RegExp;
  /** The exact Allow header of a 405. */
  allow?: string;
}

const TWO_MB = 2 * 1024 * 1024;
const BEYOND_INT64 = '99999999999999999999';
const NO_SUCH_ID = 987_654;

const cases: Case[] = [
  // Malformed JSON
  {
    name: 'truncated JSON object',
    method: 'POST',
    url: '/pets',
    raw: '{"name": "Rex",',
    status: 400,
    code: 'malformed_json',
    message: /not valid JSON/,
  },
  {
    name: 'JSON with unquoted keys',
    method: 'POST',
    url: '/store/orders',
    raw: '{petId: {pet}, quantity: 1}',
    status: 400,
    code: 'malformed_json',
    message: /not valid JSON/,
  },
  {
    name: 'JSON with trailing garbage',
    method: 'PUT',
    url: '/store/inventory/{pet}',
    raw: '{"quantity": 7} x',
    status: 400,
    code: 'malformed_json',
    message: /not valid JSON/,
  },
  {
    name: 'two JSON documents in one body',
    method: 'PUT',
    url: '/categories/{category}',
    raw: '{"name":"Cats"}{"name":"Birds"}',
    status: 400,
    code: 'malformed_json',
    message: /not valid JSON/,
  },
  {
    name: 'prototype poisoning (__proto__ key)',
    method: 'POST',
    url: '/categories',
    raw: '{"name":"Cats","__proto__":{"isAdmin":true}}',
    status: 400,
    code: 'malformed_json',
  },
  {
    name: 'prototype poisoning (constructor.prototype)',
    method: 'POST',
    url: '/pets',
    raw: '{"name":"Rex","categoryId":{category},"constructor":{"prototype":{"x":1}}}',
    status: 400,
    code: 'malformed_json',
  },
  // Empty body with a JSON content type
  {
    name: 'empty body, Content-Type application/json (create)',
    method: 'POST',
    url: '/pets',
    raw: '',
    status: 400,
    code: 'malformed_json',
    message: /empty/,
  },
  {
    name: 'empty body, Content-Type application/json (update)',
    method: 'PUT',
    url: '/categories/{category}',
    raw: '',
    status: 400,
    code: 'malformed_json',
    message: /empty/,
  },
  {
    name: 'empty body, Content-Type application/json; charset=utf-8',
    method: 'POST',
    url: '/store/orders',
    raw: '',
    type: 'application/json; charset=utf-8',
    status: 400,
    code: 'malformed_json',
    message: /empty/,
  },
  // Wrong types
  {
    name: 'string for an integer id',
    method: 'POST',
    url: '/pets',
    raw: '{"name": "Rex", "categoryId": "{category}"}',
    status: 400,
    code: 'validation_failed',
    message: /body\.categoryId must be integer/,
  },
  {
    name: 'number for a string',
    method: 'POST',
    url: '/pets',
    body: { name: 5, categoryId: '{category}' },
    status: 400,
    code: 'validation_failed',
    message: /body\.name must be string/,
  },
  {
    name: 'array for the body object',
    method: 'POST',
    url: '/pets',
    body: [{ name: 'Rex', categoryId: '{category}' }],
    status: 400,
    code: 'validation_failed',
    message: /must be object/,
  },
  {
    name: 'null for the body object',
    method: 'POST',
    url: '/categories',
    raw: 'null',
    status: 400,
    code: 'validation_failed',
    message: /must be object/,
  },
  {
    name: 'a bare string for the body object',
    method: 'PUT',
    url: '/store/inventory/{pet}',
    raw: '"7"',
    status: 400,
    code: 'validation_failed',
    message: /must be object/,
  },
  {
    name: 'array for a string',
    method: 'PUT',
    url: '/pets/{pet}',
    body: { name: ['Rex'], categoryId: '{category}' },
    status: 400,
    code: 'validation_failed',
    message: /body\.name must be string/,
  },
  {
    name: 'object for a string',
    method: 'POST',
    url: '/categories',
    body: { name: { first: 'Cats' } },
    status: 400,
    code: 'validation_failed',
    message: /body\.name must be string/,
  },
  {
    name: 'number for the optional description',
    method: 'PUT',
    url: '/categories/{category}',
    body: { name: 'Dogs', description: 5 },
    status: 400,
    code: 'validation_failed',
    message: /body\.description must be string/,
  },
  {
    name: 'string for the stock quantity',
    method: 'PUT',
    url: '/store/inventory/{pet}',
    body: { quantity: '7' },
    status: 400,
    code: 'validation_failed',
    message: /body\.quantity must be integer/,
  },
  {
    name: 'fraction for the stock quantity',
    method: 'PUT',
    url: '/store/inventory/{pet}',
    body: { quantity: 1.5 },
    status: 400,
    code: 'validation_failed',
    message: /body\.quantity must be integer/,
  },
  {
    name: 'null for the stock quantity',
    method: 'PUT',
    url: '/store/inventory/{pet}',
    body: { quantity: null },
    status: 400,
    code: 'validation_failed',
    message: /body\.quantity must be integer/,
  },
  {
    name: 'boolean for the order quantity',
    method: 'POST',
    url: '/store/orders',
    body: { petId: '{pet}', quantity: true },
    status: 400,
    code: 'validation_failed',
    message: /body\.quantity must be integer/,
  },
  {
    name: 'fraction for a category id',
    method: 'PUT',
    url: '/pets/{pet}',
    body: { name: 'Rex', categoryId: 1.5 },
    status: 400,
    code: 'validation_failed',
    message: /body\.categoryId must be integer/,
  },
  {
    name: 'a shipDate that is not a date-time',
    method: 'POST',
    url: '/store/orders',
    body: { petId: '{pet}', quantity: 1, shipDate: 'tomorrow' },
    status: 400,
    code: 'validation_failed',
    message: /body\.shipDate must match format "date-time"/,
  },
  {
    name: 'a name of only spaces',
    method: 'POST',
    url: '/categories',
    body: { name: '   ' },
    status: 400,
    code: 'validation_failed',
    message: /body\.name/,
  },
  {
    name: 'a name longer than 100 characters',
    method: 'PUT',
    url: '/pets/{pet}',
    body: { name: 'R'.repeat(101), categoryId: '{category}' },
    status: 400,
    code: 'validation_failed',
    message: /body\.name/,
  },
  // Unknown fields
  {
    name: 'unknown field on a new pet',
    method: 'POST',
    url: '/pets',
    body: { name: 'Rex', categoryId: '{category}', color: 'brown' },
    status: 400,
    code: 'validation_failed',
    message: /unknown field "color"/,
  },
  {
    name: 'client-chosen id on a new category',
    method: 'POST',
    url: '/categories',
    body: { id: 5000, name: 'Cats' },
    status: 400,
    code: 'validation_failed',
    message: /unknown field "id"/,
  },
  {
    name: 'complete on a new order',
    method: 'POST',
    url: '/store/orders',
    body: { petId: '{pet}', quantity: 1, complete: true },
    status: 400,
    code: 'validation_failed',
    message: /unknown field "complete"/,
  },
  {
    name: 'status on a stock update',
    method: 'PUT',
    url: '/store/inventory/{pet}',
    body: { quantity: 7, status: 'sold' },
    status: 400,
    code: 'validation_failed',
    message: /unknown field "status"/,
  },
  {
    name: 'id on a pet update',
    method: 'PUT',
    url: '/pets/{pet}',
    body: { id: 5000, name: 'Max', categoryId: '{category}' },
    status: 400,
    code: 'validation_failed',
    message: /unknown field "id"/,
  },
  // Out-of-enum statuses
  {
    name: 'status not in the enumeration (create)',
    method: 'POST',
    url: '/pets',
    body: { name: 'Rex', categoryId: '{category}', status: 'lost' },
    status: 400,
    code: 'validation_failed',
    message: /body\.status must be one of: available, pending, sold/,
  },
  {
    name: 'status in the wrong case',
    method: 'POST',
    url: '/pets',
    body: { name: 'Rex', categoryId: '{category}', status: 'Available' },
    status: 400,
    code: 'validation_failed',
    message: /body\.status must be one of/,
  },
  {
    name: 'status not in the enumeration (update)',
    method: 'PUT',
    url: '/pets/{pet}',
    body: { name: 'Rex', categoryId: '{category}', status: 'adopted' },
    status: 400,
    code: 'validation_failed',
    message: /body\.status must be one of/,
  },
  {
    name: 'status filter not in the enumeration',
    method: 'GET',
    url: '/pets?status=lost',
    status: 400,
    code: 'validation_failed',
    message: /status must be one of: available, pending, sold/,
  },
  // Quantities
  {
    name: 'order quantity zero',
    method: 'POST',
    url: '/store/orders',
    body: { petId: '{pet}', quantity: 0 },
    status: 400,
    code: 'validation_failed',
    message: /body\.quantity must be >= 1/,
  },
  {
    name: 'negative order quantity',
    method: 'POST',
    url: '/store/orders',
    body: { petId: '{pet}', quantity: -1 },
    status: 400,
    code: 'validation_failed',
    message: /body\.quantity must be >= 1/,
  },
  {
    name: 'order quantity above the maximum',
    method: 'POST',
    url: '/store/orders',
    body: { petId: '{pet}', quantity: 10_001 },
    status: 400,
    code: 'validation_failed',
    message: /body\.quantity must be <= 10000/,
  },
  {
    name: 'negative stock',
    method: 'PUT',
    url: '/store/inventory/{pet}',
    body: { quantity: -1 },
    status: 400,
    code: 'validation_failed',
    message: /body\.quantity must be >= 0/,
  },
  {
    name: 'stock above the maximum',
    method: 'PUT',
    url: '/store/inventory/{pet}',
    body: { quantity: 1_000_001 },
    status: 400,
    code: 'validation_failed',
    message: /body\.quantity must be <= 1000000/,
  },
  // Ids beyond int64, non-numeric, zero, negative
  {
    name: 'pet id beyond int64 in the path (read)',
    method: 'GET',
    url: `/pets/${BEYOND_INT64}`,
    status: 400,
    code: 'validation_failed',
    message: /path parameter petId must be <= 9007199254740991/i,
  },
  {
    name: 'pet id beyond int64 in the path (delete)',
    method: 'DELETE',
    url: `/pets/${BEYOND_INT64}`,
    status: 400,
    code: 'validation_failed',
    message: /petId/,
  },
  {
    name: 'pet id beyond int64 in the path (set stock)',
    method: 'PUT',
    url: `/store/inventory/${BEYOND_INT64}`,
    body: { quantity: 7 },
    status: 400,
    code: 'validation_failed',
    message: /petId/,
  },
  {
    name: 'order id 2^63 in the path (cancel)',
    method: 'DELETE',
    url: '/store/orders/9223372036854775808',
    status: 400,
    code: 'validation_failed',
    message: /orderId/,
  },
  {
    name: 'order id beyond int64 in the path (complete)',
    method: 'POST',
    url: `/store/orders/${BEYOND_INT64}/complete`,
    status: 400,
    code: 'validation_failed',
    message: /orderId/,
  },
  {
    name: 'category id 2^53 in the path (update)',
    method: 'PUT',
    url: '/categories/9007199254740992',
    body: { name: 'Wolves' },
    status: 400,
    code: 'validation_failed',
    message: /categoryId must be <= 9007199254740991/,
  },
  {
    name: 'pet id beyond int64 in a query filter',
    method: 'GET',
    url: `/pets?id={pet}&id=${BEYOND_INT64}`,
    status: 400,
    code: 'validation_failed',
    message: /id/,
  },
  {
    name: 'petId 1e20 in the body',
    method: 'POST',
    url: '/store/orders',
    raw: '{"petId": 1e20, "quantity": 1}',
    status: 400,
    code: 'validation_failed',
    message: /body\.petId must be <= 9007199254740991/,
  },
  {
    name: 'categoryId 2^63 in the body',
    method: 'POST',
    url: '/pets',
    raw: '{"name": "Rex", "categoryId": 9223372036854775808}',
    status: 400,
    code: 'validation_failed',
    message: /body\.categoryId must be <= 9007199254740991/,
  },
  {
    name: 'categoryId 1e20 in an update body',
    method: 'PUT',
    url: '/pets/{pet}',
    raw: '{"name": "Rex", "categoryId": 1e20}',
    status: 400,
    code: 'validation_failed',
    message: /body\.categoryId/,
  },
  {
    name: 'non-numeric pet id (read)',
    method: 'GET',
    url: '/pets/abc',
    status: 400,
    code: 'validation_failed',
    message: /path parameter petId must be integer/i,
  },
  {
    name: 'non-numeric pet id (update)',
    method: 'PUT',
    url: '/pets/abc',
    body: { name: 'Rex', categoryId: '{category}' },
    status: 400,
    code: 'validation_failed',
    message: /petId must be integer/,
  },
  {
    name: 'non-numeric pet id (delete)',
    method: 'DELETE',
    url: '/pets/abc',
    status: 400,
    code: 'validation_failed',
    message: /petId must be integer/,
  },
  {
    name: 'non-numeric order id (cancel)',
    method: 'DELETE',
    url: '/store/orders/first',
    status: 400,
    code: 'validation_failed',
    message: /orderId must be integer/,
  },
  {
    name: 'non-numeric pet id (set stock)',
    method: 'PUT',
    url: '/store/inventory/rex',
    body: { quantity: 7 },
    status: 400,
    code: 'validation_failed',
    message: /petId must be integer/,
  },
  {
    name: 'non-numeric category id (delete)',
    method: 'DELETE',
    url: '/categories/dogs',
    status: 400,
    code: 'validation_failed',
    message: /categoryId must be integer/,
  },
  {
    name: 'pet id zero',
    method: 'DELETE',
    url: '/pets/0',
    status: 400,
    code: 'validation_failed',
    message: /petId must be >= 1/,
  },
  {
    name: 'negative pet id',
    method: 'GET',
    url: '/pets/-1',
    status: 400,
    code: 'validation_failed',
    message: /petId must be >= 1/,
  },
  // Missing references
  {
    name: 'categoryId that does not exist (create pet)',
    method: 'POST',
    url: '/pets',
    body: { name: 'Rex', categoryId: NO_SUCH_ID },
    status: 422,
    code: 'unknown_category',
    message: new RegExp(`categoryId ${NO_SUCH_ID}`),
  },
  {
    name: 'categoryId that does not exist (update pet)',
    method: 'PUT',
    url: '/pets/{pet}',
    body: { name: 'Rex', categoryId: NO_SUCH_ID },
    status: 422,
    code: 'unknown_category',
    message: new RegExp(`categoryId ${NO_SUCH_ID}`),
  },
  {
    name: 'order petId that does not exist',
    method: 'POST',
    url: '/store/orders',
    body: { petId: NO_SUCH_ID, quantity: 1 },
    status: 422,
    code: 'unknown_pet',
    message: new RegExp(`petId ${NO_SUCH_ID}`),
  },
  // Bodies above the limit
  {
    name: '2 MB JSON body (valid JSON)',
    method: 'POST',
    url: '/pets',
    body: { name: 'R'.repeat(TWO_MB), categoryId: '{category}' },
    status: 413,
    code: 'body_too_large',
    message: /1048576 bytes/,
  },
  {
    name: '2 MB body that is not JSON either',
    method: 'POST',
    url: '/store/orders',
    raw: 'x'.repeat(TWO_MB),
    status: 413,
    code: 'body_too_large',
  },
  {
    name: '2 MB stock update',
    method: 'PUT',
    url: '/store/inventory/{pet}',
    raw: `{"quantity": 7, "pad": "${' '.repeat(TWO_MB)}"}`,
    status: 413,
    code: 'body_too_large',
  },
  // Wrong content types
  {
    name: 'text/plain body',
    method: 'POST',
    url: '/pets',
    raw: '{"name":"Rex","categoryId":{category}}',
    type: 'text/plain',
    status: 415,
    code: 'unsupported_media_type',
    message: /application\/json/,
  },
  {
    name: 'form-encoded body',
    method: 'POST',
    url: '/pets',
    raw: 'name=Rex&categoryId={category}',
    type: 'application/x-www-form-urlencoded',
    status: 415,
    code: 'unsupported_media_type',
    message: /application\/json/,
  },
  {
    name: 'form-encoded order',
    method: 'POST',
    url: '/store/orders',
    raw: 'petId={pet}&quantity=1',
    type: 'application/x-www-form-urlencoded',
    status: 415,
    code: 'unsupported_media_type',
  },
  {
    name: 'text/plain stock update',
    method: 'PUT',
    url: '/store/inventory/{pet}',
    raw: '7',
    type: 'text/plain',
    status: 415,
    code: 'unsupported_media_type',
  },
  {
    name: 'multipart body',
    method: 'PUT',
    url: '/categories/{category}',
    raw: '--b\r\nContent-Disposition: form-data; name="name"\r\n\r\nCats\r\n--b--\r\n',
    type: 'multipart/form-data; boundary=b',
    status: 415,
    code: 'unsupported_media_type',
  },
  {
    name: 'a media type that only starts with application/json',
    method: 'POST',
    url: '/categories',
    raw: '{"name":"Cats"}',
    type: 'application/jsonx',
    status: 415,
    code: 'unsupported_media_type',
  },
  {
    name: 'JSON text without any Content-Type',
    method: 'POST',
    url: '/categories',
    raw: '{"name":"Cats"}',
    type: null,
    status: 415,
    code: 'unsupported_media_type',
  },
  // Missing required fields
  {
    name: 'pet without categoryId',
    method: 'POST',
    url: '/pets',
    body: { name: 'Rex' },
    status: 400,
    code: 'validation_failed',
    message: /missing the required field "categoryId"/,
  },
  {
    name: 'pet without name',
    method: 'POST',
    url: '/pets',
    body: { categoryId: '{category}' },
    status: 400,
    code: 'validation_failed',
    message: /missing the required field "name"/,
  },
  {
    name: 'pet update without categoryId',
    method: 'PUT',
    url: '/pets/{pet}',
    body: { name: 'Max' },
    status: 400,
    code: 'validation_failed',
    message: /missing the required field "categoryId"/,
  },
  {
    name: 'category without name',
    method: 'POST',
    url: '/categories',
    body: { description: 'Nameless' },
    status: 400,
    code: 'validation_failed',
    message: /missing the required field "name"/,
  },
  {
    name: 'order without petId',
    method: 'POST',
    url: '/store/orders',
    body: { quantity: 1 },
    status: 400,
    code: 'validation_failed',
    message: /missing the required field "petId"/,
  },
  {
    name: 'order without quantity',
    method: 'POST',
    url: '/store/orders',
    body: { petId: '{pet}' },
    status: 400,
    code: 'validation_failed',
    message: /missing the required field "quantity"/,
  },
  {
    name: 'empty stock update',
    method: 'PUT',
    url: '/store/inventory/{pet}',
    body: {},
    status: 400,
    code: 'validation_failed',
    message: /missing the required field "quantity"/,
  },
  {
    name: 'no body at all on a create',
    method: 'POST',
    url: '/categories',
    status: 400,
    code: 'validation_failed',
    message: /must be object/,
  },
  // Unknown and invalid query parameters
  {
    name: 'unknown query parameter on a list',
    method: 'GET',
    url: '/pets?color=brown',
    status: 400,
    code: 'validation_failed',
    message: /unknown field "color"/,
  },
  {
    name: 'unknown query parameter on the orders list',
    method: 'GET',
    url: '/store/orders?customer=me',
    status: 400,
    code: 'validation_failed',
    message: /unknown field "customer"/,
  },
  {
    name: 'unknown query parameter on a create (no dry runs)',
    method: 'POST',
    url: '/store/orders?dryRun=true',
    body: { petId: '{pet}', quantity: 1 },
    status: 400,
    code: 'validation_failed',
    message: /unknown field "dryRun"/,
  },
  {
    name: 'unknown query parameter on a delete',
    method: 'DELETE',
    url: '/categories/{category}?force=true',
    status: 400,
    code: 'validation_failed',
    message: /unknown field "force"/,
  },
  {
    name: 'unknown query parameter on a stock update',
    method: 'PUT',
    url: '/store/inventory/{pet}?mode=add',
    body: { quantity: 7 },
    status: 400,
    code: 'validation_failed',
    message: /unknown field "mode"/,
  },
  {
    name: 'page size zero',
    method: 'GET',
    url: '/categories?limit=0',
    status: 400,
    code: 'validation_failed',
    message: /limit must be >= 1/,
  },
  {
    name: 'page size above the maximum',
    method: 'GET',
    url: '/store/inventory?limit=101',
    status: 400,
    code: 'validation_failed',
    message: /limit must be <= 100/,
  },
  {
    name: 'non-boolean complete filter',
    method: 'GET',
    url: '/store/orders?complete=maybe',
    status: 400,
    code: 'validation_failed',
    message: /complete must be boolean/,
  },
  // Invalid cursors
  {
    name: 'cursor that is not ours (pets)',
    method: 'GET',
    url: '/pets?cursor=bm9wZQ',
    status: 400,
    code: 'validation_failed',
    message: /cursor is not valid/,
  },
  {
    name: 'cursor that is not ours (categories)',
    method: 'GET',
    url: '/categories?cursor=garbage',
    status: 400,
    code: 'validation_failed',
    message: /cursor is not valid/,
  },
  {
    name: 'cursor that is not ours (orders)',
    method: 'GET',
    url: `/store/orders?cursor=${Buffer.from('after:-1').toString('base64url')}`,
    status: 400,
    code: 'validation_failed',
    message: /cursor is not valid/,
  },
  {
    name: 'cursor that is not ours (inventory)',
    method: 'GET',
    url: `/store/inventory?cursor=${Buffer.from('after:1 OR 1=1').toString('base64url')}`,
    status: 400,
    code: 'validation_failed',
    message: /cursor is not valid/,
  },
  {
    name: 'empty cursor',
    method: 'GET',
    url: '/pets?cursor=',
    status: 400,
    code: 'validation_failed',
    message: /cursor/,
  },
  // Unknown routes and methods
  {
    name: 'unknown path',
    method: 'GET',
    url: '/owners',
    status: 404,
    code: 'route_not_found',
    message: /GET \/owners/,
  },
  {
    name: 'unknown path below a known one',
    method: 'POST',
    url: '/pets/{pet}/photos',
    body: { url: 'https://example.com/rex.jpg' },
    status: 404,
    code: 'route_not_found',
  },
  {
    name: 'PATCH on a pet',
    method: 'PATCH',
    url: '/pets/{pet}',
    body: { name: 'Max' },
    status: 405,
    code: 'method_not_allowed',
    allow: 'GET, HEAD, PUT, DELETE',
    message: /PATCH is not allowed/,
  },
  {
    name: 'DELETE on the pets collection',
    method: 'DELETE',
    url: '/pets',
    status: 405,
    code: 'method_not_allowed',
    allow: 'GET, HEAD, POST',
  },
  {
    name: 'PUT on the orders collection',
    method: 'PUT',
    url: '/store/orders',
    body: { petId: '{pet}', quantity: 1 },
    status: 405,
    code: 'method_not_allowed',
    allow: 'POST, GET, HEAD',
  },
  {
    name: 'POST on an inventory entry',
    method: 'POST',
    url: '/store/inventory/{pet}',
    body: { quantity: 7 },
    status: 405,
    code: 'method_not_allowed',
    allow: 'GET, HEAD, PUT',
  },
  {
    name: 'GET on order completion',
    method: 'GET',
    url: '/store/orders/{order}/complete',
    status: 405,
    code: 'method_not_allowed',
    allow: 'POST',
  },
  {
    name: 'DELETE on the inventory list',
    method: 'DELETE',
    url: '/store/inventory',
    status: 405,
    code: 'method_not_allowed',
    allow: 'GET, HEAD',
  },
];

/** Every row of every Petstore table, in key order. */
async function snapshot(ps: TestPetstore) {
  const db = ps.database.db;
  return {
    categories: await db.selectFrom('categories').selectAll().orderBy('id').execute(),
    pets: await db.selectFrom('pets').selectAll().orderBy('id').execute(),
    inventory: await db.selectFrom('inventory').selectAll().orderBy('pet_id').execute(),
    orders: await db.selectFrom('orders').selectAll().orderBy('id').execute(),
  };
}

function fill(text: string, f: Fixture): string {
  return text
    .replaceAll('{pet}', String(f.pet))
    .replaceAll('{category}', String(f.category))
    .replaceAll('{order}', String(f.order));
}

/** Replaces placeholder strings in a JSON body: `'{pet}'` becomes the pet id as a number. */
function fillBody(value: unknown, f: Fixture): unknown {
  if (typeof value === 'string') {
    const ids: Record<string, number> = { '{pet}': f.pet, '{category}': f.category, '{order}': f.order };
    return ids[value] ?? value;
  }
  if (Array.isArray(value)) return value.map((v) => fillBody(v, f));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillBody(v, f)]));
  }
  return value;
}

/** The codes the OpenAPI document lists (`x-error-codes`) for an operation and status. */
const documentPaths = petstoreDocument(TEST_DEPRECATION).paths as Record<
  string,
  Record<string, { responses: Record<string, { 'x-error-codes'?: string[] }> }>
>;
function operationAt(path: string) {
  for (const [template, item] of Object.entries(documentPaths)) {
    if (new RegExp(`^${template.replaceAll(/\{[^}]+\}/g, '[^/]+')}$`).test(path)) return item;
  }
  return undefined;
}
function documentedCodes(method: string, url: string, status: number): string[] | undefined {
  const op = operationAt(url.split('?')[0] ?? url)?.[method.toLowerCase()];
  return op ? (op.responses[String(status)]?.['x-error-codes'] ?? []) : undefined;
}
/** The methods the document has for a path, upper case. */
function documentedMethods(url: string): string[] {
  return Object.keys(operationAt(url.split('?')[0] ?? url) ?? {}).map((m) => m.toUpperCase());
}

interface ErrorBody {
  code: string;
  message: string;
  status: number;
}

for (const dialect of testDialects()) {
  describe(`bad input is refused and writes nothing (${dialect})`, () => {
    let ps: TestPetstore;
    let fixture: Fixture;
    before(async () => {
      ps = await startPetstore(dialect);
      const category = await ps.request<{ id: number }>('POST', '/categories', {
        name: 'Dogs',
        description: 'Loyal',
      });
      const pet = await ps.request<{ id: number }>('POST', '/pets', {
        name: 'Rex',
        categoryId: category.body.id,
      });
      assert.equal((await ps.request('PUT', `/store/inventory/${pet.body.id}`, { quantity: 5 })).status, 200);
      const order = await ps.request<{ id: number }>('POST', '/store/orders', {
        petId: pet.body.id,
        quantity: 2,
      });
      assert.equal(order.status, 201);
      fixture = { category: category.body.id, pet: pet.body.id, order: order.body.id };
      const state = await snapshot(ps);
      assert.deepEqual(
        [state.categories.length, state.pets.length, state.inventory.length, state.orders.length],
        [1, 1, 1, 1],
      );
    });
    after(() => ps.close());

    for (const c of cases) {
      it(`${c.method} ${c.url.slice(0, 60)}: ${c.name} → ${c.status} ${c.code}`, async () => {
        const url = fill(c.url, fixture);
        let body: unknown;
        let headers: Record<string, string> = {};
        if (c.raw !== undefined) {
          body = fill(c.raw, fixture);
          if (c.type !== null) headers = { 'content-type': c.type ?? 'application/json' };
        } else if (c.body !== undefined) {
          body = fillBody(c.body, fixture);
        }
        const before = await snapshot(ps);
        const answer = await ps.request<ErrorBody>(c.method, url, body, headers);

        assert.equal(answer.status, c.status, answer.text.slice(0, 300));
        assert.deepEqual(answer.body, { code: c.code, message: answer.body.message, status: c.status });
        assert.equal(typeof answer.body.message, 'string');
        assert.ok(answer.body.message.trim().length > 0, 'the message is empty');
        if (c.message) assert.match(answer.body.message, c.message);
        assert.match(String(answer.headers['content-type']), /^application\/json/);

        const declared = documentedCodes(c.method, url, c.status);
        if (c.code === 'route_not_found' || c.code === 'method_not_allowed') {
          // Not an operation of the document: 404 for an unknown path, 405 for a known one.
          assert.equal(declared, undefined, `${c.method} ${url} is an operation of the document`);
          const methods = documentedMethods(url);
          assert.equal(methods.length > 0, c.code === 'method_not_allowed', `methods at ${url}: ${methods}`);
        } else {
          assert.ok(declared, `${c.method} ${url} is not an operation of the document`);
          assert.ok(
            declared.includes(c.code),
            `${c.method} ${url} answered ${c.status} ${c.code}, but the document lists only [${declared.join(', ')}] for ${c.status}`,
          );
        }
        if (c.allow !== undefined) assert.equal(answer.headers.allow, c.allow);
        else assert.equal(answer.headers.allow, undefined);

        assert.deepEqual(await snapshot(ps), before, 'the refused request changed the database');
      });
    }

    it('the snapshot sees a write (so the checks above can fail)', async () => {
      const before = await snapshot(ps);
      const accepted = await ps.request('PUT', `/store/inventory/${fixture.pet}`, { quantity: 4 });
      assert.equal(accepted.status, 200);
      assert.notDeepEqual(await snapshot(ps), before);
    });
  });
}

/**
 * Bodies sent where none is expected are ignored, not parsed (they once were, and refused):
 * - Operations without a request body (DELETE, POST …/complete) answer 400 `malformed_json`,
 *   413 or 415, none of which their documented responses list. Many HTTP clients send
 *   `Content-Type: application/json` with an empty body on such calls.
 * - Unknown paths and methods answer 400 or 413 instead of 404/405 when the body is malformed,
 *   empty with a JSON type, or too large.
 */
interface BodyBug {
  name: string;
  method: string;
  url: string;
  raw: string;
  type: string;
  /** The answer due; without it, any code the operation documents for the status it gives. */
  expect?: { status: number; code: string };
}
const bodyBugs: BodyBug[] = [
  {
    name: 'empty body with Content-Type: application/json on a bodiless POST',
    method: 'POST',
    url: `/store/orders/${NO_SUCH_ID}/complete`,
    raw: '',
    type: 'application/json',
  },
  {
    name: 'text/plain body on a DELETE',
    method: 'DELETE',
    url: `/store/orders/${NO_SUCH_ID}`,
    raw: 'please',
    type: 'text/plain',
  },
  {
    name: '2 MB body on a DELETE',
    method: 'DELETE',
    url: `/pets/${NO_SUCH_ID}`,
    raw: 'x'.repeat(TWO_MB),
    type: 'application/json',
  },
  {
    name: 'unknown path with a malformed JSON body',
    method: 'POST',
    url: '/store/returns',
    raw: '{"orderId":',
    type: 'application/json',
    expect: { status: 404, code: 'route_not_found' },
  },
  {
    name: 'unknown path with a 2 MB body',
    method: 'POST',
    url: '/store/returns',
    raw: 'x'.repeat(TWO_MB),
    type: 'application/json',
    expect: { status: 404, code: 'route_not_found' },
  },
  {
    name: 'wrong method with an empty JSON body',
    method: 'PUT',
    url: '/store/orders',
    raw: '',
    type: 'application/json',
    expect: { status: 405, code: 'method_not_allowed' },
  },
];

for (const dialect of testDialects()) {
  describe(`bodies the route takes no interest in (${dialect})`, () => {
    let ps: TestPetstore;
    before(async () => {
      ps = await startPetstore(dialect);
    });
    after(() => ps.close());

    for (const c of bodyBugs) {
      it(`${c.method} ${c.url}: ${c.name}`, async () => {
        const before = await snapshot(ps);
        const answer = await ps.request<ErrorBody>(c.method, c.url, c.raw, { 'content-type': c.type });
        if (c.expect) {
          assert.deepEqual([answer.status, answer.body.code], [c.expect.status, c.expect.code]);
        } else {
          const declared = documentedCodes(c.method, c.url, answer.status) ?? [];
          assert.ok(
            declared.includes(answer.body.code),
            `${answer.status} ${answer.body.code} is not documented (documented: [${declared.join(', ')}])`,
          );
        }
        assert.deepEqual(await snapshot(ps), before);
      });
    }
  });
}
