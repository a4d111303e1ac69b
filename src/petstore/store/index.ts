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
import { listInventory, readInventory, setStock } from './inventory.ts';
import { cancelOrder, completeOrder, listOrders, placeOrder, readOrder } from './orders.ts';
import { createPet, deletePet, petLister, petReader, updatePet } from './pets.ts';

export type { NewCategory } from './categories.ts';
export type { Category, InventoryItem, Order, Page, Pet } from './context.ts';
export type { NewOrder, OrderFilter } from './orders.ts';
export type { NewPet, PetFilter } from './pets.ts';

type Bound<F> = F extends (ctx: StoreContext, ...args: infer A) => infer R ? (...args: A) => R : never;
const bind = <F extends (ctx: StoreContext, ...args: never[]) => unknown>(ctx: StoreContext, f: F) =>
  ((...args: never[]) => f(ctx, ...args)) as Bound<F>;

/** The Petstore's operations over one database; what route handlers call. */
export function createPetstoreStore(database: Database<PetstoreTables>, clock: Clock) {
  const ctx: StoreContext = { database, db: database.db, dialect: database.dialect, clock };
  return {
    /** For the key service and idempotency records, which share the database. */
    context: ctx,
    createPet: bind(ctx, createPet),
    readPet: petReader(ctx),
    listPets: petLister(ctx),
    updatePet: bind(ctx, updatePet),
    deletePet: bind(ctx, deletePet),
    createCategory: bind(ctx, createCategory),
    readCategory: bind(ctx, readCategory),
    listCategories: bind(ctx, listCategories),
    updateCategory: bind(ctx, updateCategory),
    deleteCategory: bind(ctx, deleteCategory),
    placeOrder: bind(ctx, placeOrder),
    readOrder: bind(ctx, readOrder),
    listOrders: bind(ctx, listOrders),
    completeOrder: bind(ctx, completeOrder),
    cancelOrder: bind(ctx, cancelOrder),
    readInventory: bind(ctx, readInventory),
    listInventory: bind(ctx, listInventory),
    setStock: bind(ctx, setStock),
    runIdempotent: bind(ctx, runIdempotent),
  };
}

export type PetstoreStore = ReturnType<typeof createPetstoreStore>;
