import {
  compileRowsOnce,
  type Outcome,
  rowsOf,
  runStepsIn,
  type Steps,
  transact,
} from '../../storage/index.ts';
import { petstoreErrors } from '../errors.ts';
import { emitEventSteps, emitEvents, type PetstoreEvent } from '../events/emit-event.ts';
import {
  ORDER_REFUSALS,
  type OrderEvent,
  type OrderState,
  orderTransition,
  type PetStatus,
} from '../stock-rules.ts';
import type { PetstoreDb, PetstoreTrx, StoreContext } from './context.ts';
import { type Page, readPage } from './pages.ts';
import { type Order, toOrder, type Versioned } from './resources.ts';
import {
  lockStock,
  moveLedger,
  type StockLedger,
  shiftStock,
  stockStatementsOf,
  writeStock,
} from './stock-ledger.ts';

export interface NewOrder {
  petId: number;
  quantity: number;
  shipDate?: string;
}

export interface OrderFilter {
  petId?: number;
  complete?: boolean;
  limit: number;
  cursor?: string;
}

const notFound = (id: number) =>
  petstoreErrors.error('order_not_found', `No order has id ${id}. List orders with GET /store/orders.`);

const unknownPet = (petId: number) =>
  petstoreErrors.error(
    'unknown_pet',
    `petId ${petId} names no pet. Pick one from GET /pets?status=available.`,
  );

const insufficientStock = (petId: number, stock: number, quantity: number) =>
  petstoreErrors.error(
    'insufficient_stock',
    `Pet ${petId} has ${stock} in stock and the order asks for ${quantity}. Order at most ${stock}, or wait for stock.`,
  );

const PLACE = orderTransition(null, 'place');
if (!PLACE) throw new Error('the state table has no row for placing an order');
const placing = PLACE;

/** The INSERT of a batch's orders, compiled once per database and row count. */
function orderInsert(db: PetstoreDb) {
  type NewRow = {
    pet_id: number;
    quantity: number;
    ship_date: string | null;
    complete: number;
    created_at: string;
  };
  return compileRowsOnce(
    (rows: readonly NewRow[]) =>
      db
        .insertInto('orders')
        .values([...rows])
        .returning(['id', 'pet_id', 'quantity', 'ship_date', 'complete']),
    { pet_id: 0, quantity: 0, ship_date: '' as string | null, complete: 0, created_at: '' },
    (row) => [row.pet_id, row.quantity, row.ship_date, row.complete, row.created_at],
  );
}

/**
 * Places orders, in the order they arrived, in one transaction: the rule of placing an order,
 * written once for every way it runs (SQLite's and PostgreSQL's group commit, and the caller's
 * transaction of an idempotent request). Each pet's stock row is read and locked once; the state
 * table then takes each order in turn against the levels left by the orders before it, so an
 * order refused (unknown pet, not enough stock) is refused alone, before anything is written; and
 * the accepted orders are written with one statement per table, whatever their number. On
 * PostgreSQL every statement is a round trip, so a batch costs about as much as one order.
 */
function* placeOrders(
  ctx: StoreContext,
  insertOrders: ReturnType<typeof orderInsert>,
  inputs: readonly NewOrder[],
): Steps<Outcome<Order>[]> {
  const statements = stockStatementsOf(ctx.db, ctx.dialect);
  const ledgers = new Map<number, StockLedger>();
  // In pet id order: two batches (on two nodes) lock rows in the same order, so never in a cycle.
  for (const petId of [...new Set(inputs.map((o) => o.petId))].sort((a, b) => a - b)) {
    const ledger = yield* lockStock(statements, petId);
    if (ledger) ledgers.set(petId, ledger);
  }
  const outcomes: Outcome<Order>[] = new Array(inputs.length);
  const accepted: { index: number; input: NewOrder; stock: number; status: PetStatus }[] = [];
  inputs.forEach((input, index) => {
    const ledger = ledgers.get(input.petId);
    if (!ledger) {
      outcomes[index] = { ok: false, error: unknownPet(input.petId) };
    } else if (
      !moveLedger(ledger, placing.stockDelta(input.quantity), placing.reservedDelta(input.quantity))
    ) {
      outcomes[index] = { ok: false, error: insufficientStock(input.petId, ledger.stock, input.quantity) };
    } else {
      accepted.push({ index, input, stock: ledger.stock, status: ledger.status });
    }
  });
  if (accepted.length === 0) return outcomes;

  for (const [petId, ledger] of ledgers) yield* writeStock(statements, petId, ledger);
  const createdAt = ctx.clock.now().toISOString();
  const rows = yield* rowsOf(
    insertOrders(
      accepted.map(({ input }) => ({
        pet_id: input.petId,
        quantity: input.quantity,
        ship_date: input.shipDate === undefined ? null : new Date(input.shipDate).toISOString(),
        complete: 0,
        created_at: createdAt,
      })),
    ),
  );
  // Ids are given in the order the rows are listed; RETURNING promises no order, so sort.
  rows.sort((a, b) => a.id - b.id);
  const events: PetstoreEvent[] = [];
  accepted.forEach(({ index, input, stock, status }, i) => {
    const row = rows[i];
    if (row?.pet_id !== input.petId || row.quantity !== input.quantity)
      throw new Error('the inserted orders came back in an order other than their ids');
    const order = toOrder(row);
    outcomes[index] = { ok: true, value: order };
    // In the same transaction as the order: a batch that rolls back takes its events with it.
    events.push(...orderEvents('order.placed', order, stock, status));
  });
  yield* emitEventSteps(ctx, events);
  return outcomes;
}

/**
 * Places an order: its units move from stock to reserved in the same transaction. Orders placed
 * together are group-committed (one transaction for those that arrive while the previous one
 * commits); nobody is answered before their transaction commits. Inside a caller's transaction
 * (an idempotent request) the same rule runs there, for that order alone.
 */
export function orderPlacer(ctx: StoreContext): (input: NewOrder, outer?: PetstoreTrx) => Promise<Order> {
  const insertOrders = orderInsert(ctx.db);
  const work = (inputs: readonly NewOrder[]) => placeOrders(ctx, insertOrders, inputs);
  const grouped = ctx.database.groupCommit.batched(work);
  return async (input, outer) => {
    if (!outer) return grouped(input);
    const [outcome] = await runStepsIn(outer, work([input]));
    if (!outcome?.ok) throw outcome?.error;
    return outcome.value;
  };
}

/** An order's event and the stock move it made, as webhook events. */
function orderEvents(
  type: 'order.placed' | 'order.completed' | 'order.cancelled',
  order: Order,
  stock: number,
  status: string,
): PetstoreEvent[] {
  return [
    { type, subject: `order:${order.id}`, data: { ...order } },
    {
      type: 'inventory.updated',
      subject: `pet:${order.petId}`,
      data: { petId: order.petId, quantity: stock, status },
    },
  ];
}

export async function readOrder(ctx: StoreContext, id: number): Promise<Versioned<Order>> {
  const row = await ctx.db
    .selectFrom('orders')
    .select(['id', 'pet_id', 'quantity', 'ship_date', 'complete', 'version'])
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw notFound(id);
  return { resource: toOrder(row), version: row.version };
}

export function listOrders(ctx: StoreContext, filter: OrderFilter): Promise<Page<Order>> {
  let query = ctx.db.selectFrom('orders').select(['id', 'pet_id', 'quantity', 'ship_date', 'complete']);
  if (filter.petId !== undefined) query = query.where('pet_id', '=', filter.petId);
  if (filter.complete !== undefined) query = query.where('complete', '=', filter.complete ? 1 : 0);
  return readPage(query, 'id', (r) => r.id, filter, toOrder);
}

/**
 * Applies an order event from the state table to a locked order row: the pet's stock levels
 * move by the row's deltas, and the order is completed or deleted.
 */
async function moveOrder(ctx: StoreContext, id: number, event: OrderEvent): Promise<Order> {
  return transact(ctx.db, async (trx: PetstoreTrx) => {
    let select = trx
      .selectFrom('orders')
      .select(['id', 'pet_id', 'quantity', 'ship_date', 'complete'])
      .where('id', '=', id);
    if (ctx.dialect === 'postgres') select = select.forUpdate();
    const row = await select.executeTakeFirst();
    if (!row) throw notFound(id);
    const from: OrderState = row.complete ? 'complete' : 'open';
    const transition = orderTransition(from, event);
    if (!transition) {
      throw petstoreErrors.error(
        ORDER_REFUSALS[from],
        `Order ${id} is already complete (shipped ${row.ship_date ?? 'earlier'}); a complete order can be neither completed again nor cancelled.`,
      );
    }
    const levels = await shiftStock(
      ctx,
      trx,
      row.pet_id,
      transition.stockDelta(row.quantity),
      transition.reservedDelta(row.quantity),
    );
    if (!levels) throw new Error(`order ${id}: stock levels of pet ${row.pet_id} refused ${event}`);
    if (transition.to === 'cancelled') {
      await trx.deleteFrom('orders').where('id', '=', id).execute();
      const order = toOrder(row);
      await emitEvents(ctx, trx, orderEvents('order.cancelled', order, levels.stock, levels.status));
      return order;
    }
    const shipDate = ctx.clock.now().toISOString();
    await trx
      .updateTable('orders')
      .set((eb) => ({ complete: 1, ship_date: shipDate, version: eb('version', '+', 1) }))
      .where('id', '=', id)
      .execute();
    const order = toOrder({ ...row, complete: 1, ship_date: shipDate });
    await emitEvents(ctx, trx, orderEvents('order.completed', order, levels.stock, levels.status));
    return order;
  });
}

/** Marks an open order fulfilled: complete = true, shipDate = now; its reserved units leave. */
export function completeOrder(ctx: StoreContext, id: number): Promise<Order> {
  return moveOrder(ctx, id, 'complete');
}

/** Cancels an open order: it is deleted and its units return to stock. */
export function cancelOrder(ctx: StoreContext, id: number): Promise<Order> {
  return moveOrder(ctx, id, 'cancel');
}
