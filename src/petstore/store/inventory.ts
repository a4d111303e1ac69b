import { readById, transact } from '../../storage/index.ts';
import { petstoreErrors } from '../errors.ts';
import { emitEvents } from '../events/emit-event.ts';
import type { PetStatus } from '../stock-rules.ts';
import type { StoreContext } from './context.ts';
import { type Page, readPage } from './pages.ts';
import { type InventoryItem, toInventoryItem, type VersionCheck, type Versioned } from './resources.ts';
import { writeStatus } from './stock-ledger.ts';

const notFound = (petId: number) =>
  petstoreErrors.error(
    'inventory_not_found',
    `No pet has id ${petId}, so there is no inventory entry. List pets with GET /pets.`,
  );

/**
 * Reads one inventory entry: a hot read (store staff poll it), compiled once per database and
 * answered with the reads asked in the same turn, as petReader.
 */
export function inventoryReader(ctx: StoreContext): (petId: number) => Promise<Versioned<InventoryItem>> {
  const select = () => ctx.db.selectFrom('inventory').select(['pet_id', 'quantity', 'status', 'version']);
  const read = readById(
    ctx.database,
    {
      all: (petIds) => select().where((eb) => eb('pet_id', '=', eb.fn.any(eb.val(petIds)))),
      one: (petId) => select().where('pet_id', '=', petId),
    },
    (values) => ({
      resource: { petId: values[0] as number, quantity: values[1] as number, status: values[2] as PetStatus },
      version: values[3] as number,
    }),
    (item) => item.resource.petId,
  );
  return async (petId) => {
    const item = await read(petId);
    if (!item) throw notFound(petId);
    return item;
  };
}

export function listInventory(
  ctx: StoreContext,
  limit: number,
  cursor?: string,
): Promise<Page<InventoryItem>> {
  const query = ctx.db.selectFrom('inventory').select(['pet_id', 'quantity', 'status']);
  return readPage(query, 'pet_id', (r) => r.pet_id, { limit, cursor }, toInventoryItem);
}

/** Sets the units available to order; units held by open orders are not touched. */
export async function setStock(
  ctx: StoreContext,
  petId: number,
  quantity: number,
  check?: VersionCheck,
): Promise<Versioned<InventoryItem>> {
  return transact(ctx.db, async (trx) => {
    if (check) {
      let select = trx.selectFrom('inventory').select('version').where('pet_id', '=', petId);
      if (ctx.dialect === 'postgres') select = select.forUpdate();
      const current = await select.executeTakeFirst();
      if (!current) throw notFound(petId);
      check(current.version);
    }
    const row = await trx
      .updateTable('inventory')
      .set((eb) => ({ quantity, version: eb('version', '+', 1) }))
      .where('pet_id', '=', petId)
      .returning(['reserved', 'status', 'version'])
      .executeTakeFirst();
    if (!row) throw notFound(petId);
    const { status } = await writeStatus(trx, petId, { stock: quantity, reserved: row.reserved }, row.status);
    const item: InventoryItem = { petId, quantity, status };
    await emitEvents(ctx, trx, [{ type: 'inventory.updated', subject: `pet:${petId}`, data: { ...item } }]);
    return { resource: item, version: row.version };
  });
}
