import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import openapiTS from 'openapi-typescript';
import { testDialects } from '../support/databases.ts';
import { startPetstore, type TestPetstore } from '../support/petstore.ts';

/**
 * Clients generated from the served document get exact types: openapi-typescript (the generator
 * openapi-fetch is typed by) turns it into TypeScript, and a small file compiled against that with
 * tsc holds every answer's always-sent properties to be required, and Idempotency-Key and If-Match
 * to be optional header parameters of the operations that honour them.
 */

const run = promisify(execFile);
const TSC = join(import.meta.dirname, '..', '..', 'node_modules', '.bin', 'tsc');

/** Compiles the generated types followed by `checks`; resolves to tsc's diagnostics ('' when clean). */
async function compile(dir: string, types: string, checks: string): Promise<string> {
  const file = join(dir, `check-${Math.random().toString(36).slice(2)}.ts`);
  await writeFile(file, `${types}\n${checks}\n`);
  try {
    await run(TSC, ['--noEmit', '--strict', '--skipLibCheck', '--target', 'es2022', file], { cwd: dir });
    return '';
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? error);
  }
}

const REQUIRED = `
type IsRequired<T, K extends keyof T> = {} extends Pick<T, K> ? false : true;
type Schemas = components['schemas'];
`;

for (const dialect of testDialects()) {
  describe(`types generated from the Petstore's document (${dialect})`, () => {
    let ps: TestPetstore;
    let dir: string;
    let types: string;
    before(async () => {
      ps = await startPetstore(dialect);
      const answer = await ps.app.inject({ method: 'GET', url: '/openapi.json' });
      assert.equal(answer.statusCode, 200);
      types = await openapiTS(JSON.parse(answer.body));
      dir = await mkdtemp(join(tmpdir(), 'petstore-types-'));
    });
    after(async () => {
      await ps?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('an answered Order has id, petId, quantity and complete required, shipDate optional', async () => {
      assert.match(
        types,
        /\n {4}Order: \{[\s\S]*?\n {6}id: number;[\s\S]*?\n {6}shipDate\?: string;[\s\S]*?\n {6}complete: boolean;/,
      );
      const checks = `${REQUIRED}
const id: IsRequired<Schemas['Order'], 'id'> = true;
const petId: IsRequired<Schemas['Order'], 'petId'> = true;
const quantity: IsRequired<Schemas['Order'], 'quantity'> = true;
const complete: IsRequired<Schemas['Order'], 'complete'> = true;
const shipDate: IsRequired<Schemas['Order'], 'shipDate'> = false;
const petStatus: IsRequired<Schemas['Pet'], 'status'> = true;
const inventoryStatus: IsRequired<Schemas['InventoryItem'], 'status'> = true;
const categoryDescription: IsRequired<Schemas['Category'], 'description'> = false;
// What a client sends keeps the seed's optionality.
const newOrderShipDate: IsRequired<Schemas['NewOrder'], 'shipDate'> = false;
const newPetStatus: IsRequired<Schemas['NewPet'], 'status'> = false;
type Placed = operations['placeOrder']['responses'][201]['content']['application/json'];
const placedId: IsRequired<Placed, 'id'> = true;
export { id, petId, quantity, complete, shipDate, petStatus, inventoryStatus, categoryDescription, newOrderShipDate, newPetStatus, placedId };`;
      assert.equal(await compile(dir, types, checks), '');
    });

    it('a check that Order.id were optional fails to compile (the checks can fail)', async () => {
      const checks = `${REQUIRED}
const id: IsRequired<Schemas['Order'], 'id'> = false;
export { id };`;
      assert.match(await compile(dir, types, checks), /error TS2322/);
    });

    it('Idempotency-Key is an optional header parameter of POST /pets and POST /store/orders', async () => {
      const checks = `
type PlaceOrderHeaders = NonNullable<operations['placeOrder']['parameters']['header']>;
type CreatePetHeaders = NonNullable<operations['createPet']['parameters']['header']>;
const withKey: PlaceOrderHeaders = { 'Idempotency-Key': '3f1c2a9e-retry' };
const withoutKey: PlaceOrderHeaders = {};
const pet: CreatePetHeaders = { 'Idempotency-Key': 'k' };
type OrdersPath = NonNullable<NonNullable<paths['/store/orders']['post']>['parameters']['header']>;
const viaPath: OrdersPath = { 'Idempotency-Key': 'k' };
export { withKey, withoutKey, pet, viaPath };`;
      assert.equal(await compile(dir, types, checks), '');
    });

    it('If-Match is an optional header parameter of the updates and deletes that honour it', async () => {
      const checks = `
type H<K extends keyof operations> = operations[K] extends { parameters: { header?: infer T } } ? NonNullable<T> : never;
const updatePet: H<'updatePet'> = { 'If-Match': '"v1"' };
const deletePet: H<'deletePet'> = { 'If-Match': '*' };
const updateCategory: H<'updateCategory'> = { 'If-Match': '"v1"' };
const deleteCategory: H<'deleteCategory'> = {};
const setStock: H<'setStock'> = { 'If-Match': '"v1"' };
export { updatePet, deletePet, updateCategory, deleteCategory, setStock };`;
      assert.equal(await compile(dir, types, checks), '');
    });
  });
}
