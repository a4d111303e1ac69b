import {
  isForeignKeyViolation,
  prepareValuesQuery,
  readById,
  shareReads,
  transact,
} from '../../storage/index.ts';
import { petstoreErrors } from '../errors.ts';
import { emitEvents } from '../events/emit-event.ts';
import { INITIAL_STOCK_BY_STATUS, type PetStatus, statusOf } from '../stock-rules.ts';
import { inTransaction, type PetstoreTrx, type StoreContext } from './context.ts';
import { decodeCursor, type Page, pageOf, readPage } from './pages.ts';
import { type Pet, toPet, type VersionCheck, type Versioned } from './resources.ts';

export interface NewPet {
  name: string;
  categoryId: number;
  status?: PetStatus;
}

export interface PetFilter {
  status?: PetStatus;
  categoryId?: number;
  ids?: number[];
  limit: number;
  cursor?: string;
}

const petNotFound = (id: number) =>
  petstoreErrors.error('pet_not_found', `No pet has id ${id}. List pets with GET /pets to find its id.`);

const unknownCategory = (id: number) =>
  petstoreErrors.error(
    'unknown_category',
    `categoryId ${id} names no category. Create it with POST /categories or pick one from GET /categories.`,
  );

/** Refuses a categoryId that names no category; read in the transaction that then writes the pet. */
async function requireCategory(trx: PetstoreTrx, categoryId: number): Promise<void> {
  const category = await trx
    .selectFrom('categories')
    .select('id')
    .where('id', '=', categoryId)
    .executeTakeFirst();
  if (!category) throw unknownCategory(categoryId);
}

/** Creates a pet and its inventory entry; the initial stock follows the requested status. */
export async function createPet(ctx: StoreContext, input: NewPet, outer?: PetstoreTrx): Promise<Pet> {
  const requested = input.status ?? 'available';
  const stock = INITIAL_STOCK_BY_STATUS[requested];
  if (stock === null) {
    throw petstoreErrors.error(
      'pet_status_conflict',
      'A new pet cannot be pending: only open orders make a pet pending. Send status available or sold, or leave it out.',
    );
  }
  try {
    return await inTransaction(ctx, outer, async (trx) => {
      await requireCategory(trx, input.categoryId);
      const { id } = await trx
        .insertInto('pets')
        .values({
          name: input.name,
          category_id: input.categoryId,
          created_at: ctx.clock.now().toISOString(),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const status = statusOf({ stock, reserved: 0 });
      await trx
        .insertInto('inventory')
        .values({ pet_id: id, quantity: stock, reserved: 0, status })
        .execute();
      const pet: Pet = { id, name: input.name, categoryId: input.categoryId, status };
      await emitEvents(ctx, trx, [{ type: 'pet.created', subject: `pet:${id}`, data: { ...pet } }]);
      return pet;
    });
  } catch (error) {
    if (isForeignKeyViolation(error)) throw unknownCategory(input.categoryId);
    throw error;
  }
}

/**
 * The hot read, compiled once per database. The reads asked in one turn of the event loop are
 * answered together at its end (batchReads), on both databases: on PostgreSQL with one query for
 * all their ids (a round trip costs more than the rows), on SQLite with the one-row statement run
 * for each, back to back. On SQLite the wait costs nothing (no I/O) and answering a turn's reads
 * together runs the same code many times in a row and sends the answers together: 1.5× the
 * requests per second of answering each as it is parsed (docs/benchmarks.md, issue 16).
 */
export function petReader(ctx: StoreContext): (id: number) => Promise<Versioned<Pet>> {
  const select = () =>
    ctx.db
      .selectFrom('pets')
      .innerJoin('inventory', 'inventory.pet_id', 'pets.id')
      .select(['pets.id', 'pets.name', 'pets.category_id', 'inventory.status', 'pets.version']);
  const read = readById(
    ctx.database,
    {
      all: (ids) => select().where((eb) => eb('pets.id', '=', eb.fn.any(eb.val(ids)))),
      one: (id) => select().where('pets.id', '=', id),
    },
    (values) => ({ resource: petOfValues(values), version: values[4] as number }),
    (pet) => pet.resource.id,
  );
  return async (id) => {
    const pet = await read(id);
    if (!pet) throw petNotFound(id);
    return pet;
  };
}

/** A pet from its columns in the order the hot reads select them (id, name, category, status). */
function petOfValues(values: readonly unknown[]): Pet {
  return {
    id: values[0] as number,
    name: values[1] as string,
    categoryId: values[2] as number,
    status: values[3] as PetStatus,
  };
}

/**
 * Lists pets; the unfiltered list (the common case) runs a query compiled once, and identical
 * pages asked in one turn share it (shareReads), on both databases (see petReader).
 */
export function petLister(ctx: StoreContext): (filter: PetFilter) => Promise<Page<Pet>> {
  const unfiltered = prepareValuesQuery(
    ctx.database,
    (after: number, limit: number) =>
      ctx.db
        .selectFrom('pets')
        .innerJoin('inventory', 'inventory.pet_id', 'pets.id')
        .select(['pets.id', 'pets.name', 'pets.category_id', 'inventory.status'])
        .where('pets.id', '>', after)
        .orderBy('pets.id')
        .limit(limit),
    [0, 1],
    petOfValues,
  );
  const page = (after: number, limit: number) =>
    unfiltered(after, limit + 1).then((pets) => pageOf(pets, limit, (pet) => pet.id));
  // Keyed by the page's start and size; the items are sent, never changed.
  const shared = shareReads((key: string) => {
    const [after, limit] = key.split(':').map(Number) as [number, number];
    return page(after, limit);
  });
  return async (filter) => {
    if (filter.status !== undefined || filter.categoryId !== undefined || filter.ids !== undefined) {
      return listPets(ctx, filter);
    }
    const after = decodeCursor(filter.cursor);
    return shared(`${after}:${filter.limit}`);
  };
}

export function listPets(ctx: StoreContext, filter: PetFilter): Promise<Page<Pet>> {
  let query = ctx.db
    .selectFrom('pets')
    .innerJoin('inventory', 'inventory.pet_id', 'pets.id')
    .select(['pets.id', 'pets.name', 'pets.category_id', 'inventory.status']);
  if (filter.status) query = query.where('inventory.status', '=', filter.status);
  if (filter.categoryId !== undefined) query = query.where('pets.category_id', '=', filter.categoryId);
  if (filter.ids) query = query.where('pets.id', 'in', filter.ids);
  return readPage(query, 'pets.id', (r) => r.id, filter, toPet);
}

/**
 * Replaces a pet's name and category. `status` may be sent but must equal the status the state
 * table gives now: status follows stock and orders, it is not set directly.
 */
export async function updatePet(
  ctx: StoreContext,
  id: number,
  input: NewPet,
  check?: VersionCheck,
): Promise<Versioned<Pet>> {
  try {
    return await transact(ctx.db, async (trx) => {
      // The inventory row first, as every change of a pet takes it (a status change bumps the
      // pet's version under it): no deadlock, no other change between the If-Match check and
      // the update, and the status answered is the one the new version stands for.
      let lock = trx.selectFrom('inventory').select('status').where('pet_id', '=', id);
      if (ctx.dialect === 'postgres') lock = lock.forNoKeyUpdate();
      const locked = await lock.executeTakeFirst();
      if (!locked) throw petNotFound(id);
      if (check) {
        const current = await trx
          .selectFrom('pets')
          .select('version')
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        check(current.version);
      }
      if (input.status !== undefined && input.status !== locked.status) {
        throw petstoreErrors.error(
          'pet_status_conflict',
          `Pet ${id} is ${locked.status}; status follows stock and open orders. Change stock with PUT /store/inventory/${id}, or leave status out.`,
        );
      }
      await requireCategory(trx, input.categoryId);
      const { version } = await trx
        .updateTable('pets')
        .set((eb) => ({ name: input.name, category_id: input.categoryId, version: eb('version', '+', 1) }))
        .where('id', '=', id)
        .returning('version')
        .executeTakeFirstOrThrow();
      const pet: Pet = {
        id,
        name: input.name,
        categoryId: input.categoryId,
        status: locked.status as PetStatus,
      };
      await emitEvents(ctx, trx, [{ type: 'pet.updated', subject: `pet:${id}`, data: { ...pet } }]);
      return { resource: pet, version };
    });
  } catch (error) {
    if (isForeignKeyViolation(error)) throw unknownCategory(input.categoryId);
    throw error;
  }
}

/** Deletes a pet and its inventory entry; refused while any order names it. */
export async function deletePet(ctx: StoreContext, id: number, check?: VersionCheck): Promise<void> {
  await transact(ctx.db, async (trx) => {
    // Lock the inventory row first, in the same order placeOrder takes its locks, so a
    // concurrent order either lands before (and blocks the delete) or finds no pet.
    let lock = trx.selectFrom('inventory').select(['pet_id', 'status']).where('pet_id', '=', id);
    if (ctx.dialect === 'postgres') lock = lock.forUpdate();
    const locked = await lock.executeTakeFirst();
    if (!locked) throw petNotFound(id);
    const row = await trx
      .selectFrom('pets')
      .select(['id', 'name', 'category_id', 'version'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    check?.(row.version);
    const pet = toPet({ ...row, status: locked.status });
    const order = await trx
      .selectFrom('orders')
      .select('id')
      .where('pet_id', '=', id)
      .limit(1)
      .executeTakeFirst();
    if (order) {
      throw petstoreErrors.error(
        'pet_has_orders',
        `Pet ${id} has orders, so it stays for their history. Set its stock to 0 with PUT /store/inventory/${id} to stop sales.`,
      );
    }
    await trx.deleteFrom('pets').where('id', '=', id).execute();
    await emitEvents(ctx, trx, [{ type: 'pet.deleted', subject: `pet:${id}`, data: { ...pet } }]);
  });
}
