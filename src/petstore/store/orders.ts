import { transact } from '../../storage/index.ts';
import { petstoreErrors } from '../errors.ts';
import { emitEvents, emitEventsSync, type PetstoreEvent } from '../events/emit-event.ts';
import {
  ORDER_REFUSALS,
  type OrderEvent,
  type OrderState,
  orderTransition,
  statusOf,
} from '../stock-rules.ts';
import {
  decodeCursor,
  inTransaction,
  type Order,
  type Page,
  type PetstoreTrx,
  pageOf,
  type StoreContext,
  shiftStock,
  toOrder,
  type Versioned,
} from './context.ts';

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

/** Places an order: its units move from stock to reserved in the same transaction. */
export async function placeOrder(ctx: StoreContext, input: NewOrder, outer?: PetstoreTrx): Promise<Order> {
  const transition = orderTransition(null, 'place');
  if (!transition) throw new Error('the state table has no row for placing an order');
  const stockDelta = transition.stockDelta(input.quantity);
  const reservedDelta = transition.reservedDelta(input.quantity);
  const shipDate = input.shipDate === undefined ? null : new Date(input.shipDate).toISOString();
  const createdAt = ctx.clock.now().toISOString();
  const { sqlite } = ctx.database;
  if (sqlite && !outer) {
    // SQLite: the same guarded UPDATE as shiftStock and the INSERT, as one synchronous
    // transaction; no await between its statements, so nothing queues behind a lock.
    return sqlite.writeSync((statement) => {
      // RETURNING status: the one before the change (this statement does not set it).
      const levels = statement(
        'UPDATE inventory SET quantity = quantity + ?, reserved = reserved + ?, version = version + 1 WHERE pet_id = ? AND quantity + ? >= 0 RETURNING quantity, reserved, status',
      ).get(stockDelta, reservedDelta, input.petId, stockDelta) as
        | { quantity: number; reserved: number; status: string }
        | undefined;
      if (!levels) {
        const item = statement('SELECT quantity FROM inventory WHERE pet_id = ?').get(input.petId) as
          | { quantity: number }
          | undefined;
        throw item ? insufficientStock(input.petId, item.quantity, input.quantity) : unknownPet(input.petId);
      }
      const status = statusOf({ stock: levels.quantity, reserved: levels.reserved });
      if (status !== levels.status) {
        // As writeStatus: the pet shows the status, so its version moves with it.
        statement('UPDATE inventory SET status = ? WHERE pet_id = ?').run(status, input.petId);
        statement('UPDATE pets SET version = version + 1 WHERE id = ?').run(input.petId);
      }
      const row = statement(
        'INSERT INTO orders (pet_id, quantity, ship_date, complete, created_at) VALUES (?, ?, ?, 0, ?) RETURNING id',
      ).get(input.petId, input.quantity, shipDate, createdAt) as { id: number };
      const order = toOrder({
        id: row.id,
        pet_id: input.petId,
        quantity: input.quantity,
        ship_date: shipDate,
        complete: 0,
      });
      // In the same savepoint as the order: a refused order rolls its events back with it.
      emitEventsSync(ctx, statement, orderEvents('order.placed', order, levels.quantity, status));
      return order;
    });
  }
  return inTransaction(ctx, outer, async (trx) => {
    const levels = await shiftStock(trx, input.petId, stockDelta, reservedDelta);
    if (!levels) {
      const item = await trx
        .selectFrom('inventory')
        .select('quantity')
        .where('pet_id', '=', input.petId)
        .executeTakeFirst();
      throw item ? insufficientStock(input.petId, item.quantity, input.quantity) : unknownPet(input.petId);
    }
    const row = await trx
      .insertInto('orders')
      .values({
        pet_id: input.petId,
        quantity: input.quantity,
        ship_date: shipDate,
        complete: 0,
        created_at: createdAt,
      })
      .returning(['id', 'pet_id', 'quantity', 'ship_date', 'complete'])
      .executeTakeFirstOrThrow();
    const order = toOrder(row);
    await emitEvents(ctx, trx, orderEvents('order.placed', order, levels.stock, levels.status));
    return order;
  });
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

export async function listOrders(ctx: StoreContext, filter: OrderFilter): Promise<Page<Order>> {
  const after = decodeCursor(filter.cursor);
  let query = ctx.db
    .selectFrom('orders')
    .select(['id', 'pet_id', 'quantity', 'ship_date', 'complete'])
    .where('id', '>', after)
    .orderBy('id')
    .limit(filter.limit + 1);
  if (filter.petId !== undefined) query = query.where('pet_id', '=', filter.petId);
  if (filter.complete !== undefined) query = query.where('complete', '=', filter.complete ? 1 : 0);
  const rows = await query.execute();
  const page = pageOf(rows, filter.limit, (r) => r.id);
  return { items: page.items.map(toOrder), next: page.next };
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
