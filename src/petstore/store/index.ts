import type { Clock } from '../../lib/clock.ts';
import type { Database } from '../../storage/index.ts';
import type { PetstoreTables } from '../db-schema.ts';
import {
  createCategory,
  deleteCategory,
  listCategories,
  readCategory,
  updateCategory,
} from './categories.ts';
import type { StoreContext } from './context.ts';
import { runIdempotent } from './idempotency.ts';
import { inventoryReader, listInventory, setStock } from './inventory.ts';
import { cancelOrder, completeOrder, listOrders, orderPlacer, readOrder } from './orders.ts';
import { createPet, deletePet, petLister, petReader, updatePet } from './pets.ts';

export type { NewCategory } from './categories.ts';
export type { NewOrder, OrderFilter } from './orders.ts';
export type { Page } from './pages.ts';
export type { NewPet, PetFilter } from './pets.ts';
export type { Category, InventoryItem, Order, Pet, VersionCheck, Versioned } from './resources.ts';

type Bound<F> = F extends (ctx: StoreContext, ...args: infer A) => infer R ? (...args: A) => R : never;
const bind = <F extends (ctx: StoreContext, ...args: never[]) => unknown>(ctx: StoreContext, f: F) =>
  ((...args: never[]) => f(ctx, ...args)) as Bound<F>;

/**
 * A change that may enqueue webhook messages, followed by `wake` once it has settled (committed
 * or rolled back) when any message was enqueued while it ran: by this change or by another that
 * ran at the same time (an extra wake-up is harmless, a missing one would delay delivery).
 */
function waking<F extends (...args: never[]) => Promise<unknown>>(
  tally: { enqueued: number },
  wake: () => void,
  f: F,
): F {
  return (async (...args: never[]) => {
    const before = tally.enqueued;
    try {
      return await f(...args);
    } finally {
      if (tally.enqueued !== before) wake();
    }
  }) as F;
}

/**
 * The Petstore's operations over one database; what route handlers call. `wake` is told after a
 * change whose webhook messages have committed (the delivery worker's wake-up).
 */
export function createPetstoreStore(
  database: Database<PetstoreTables>,
  clock: Clock,
  wake: () => void = () => {},
) {
  const events = { enqueued: 0 };
  const ctx: StoreContext = { database, db: database.db, dialect: database.dialect, clock, events };
  const w = <F extends (...args: never[]) => Promise<unknown>>(f: F) => waking(events, wake, f);
  return {
    /** For the key service and idempotency records, which share the database. */
    context: ctx,
    createPet: w(bind(ctx, createPet)),
    readPet: petReader(ctx),
    listPets: petLister(ctx),
    updatePet: w(bind(ctx, updatePet)),
    deletePet: w(bind(ctx, deletePet)),
    createCategory: w(bind(ctx, createCategory)),
    readCategory: bind(ctx, readCategory),
    listCategories: bind(ctx, listCategories),
    updateCategory: w(bind(ctx, updateCategory)),
    deleteCategory: w(bind(ctx, deleteCategory)),
    placeOrder: w(orderPlacer(ctx)),
    readOrder: bind(ctx, readOrder),
    listOrders: bind(ctx, listOrders),
    completeOrder: w(bind(ctx, completeOrder)),
    cancelOrder: w(bind(ctx, cancelOrder)),
    readInventory: inventoryReader(ctx),
    listInventory: bind(ctx, listInventory),
    setStock: w(bind(ctx, setStock)),
    runIdempotent: w(bind(ctx, runIdempotent)),
  };
}

export type PetstoreStore = ReturnType<typeof createPetstoreStore>;
