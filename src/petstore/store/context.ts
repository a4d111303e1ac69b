import type { Kysely, Transaction } from 'kysely';
import type { Clock } from '../../lib/clock.ts';
import { type Database, type Dialect, transact } from '../../storage/index.ts';
import type { PetstoreTables } from '../db-schema.ts';
import { petstoreErrors } from '../errors.ts';
import { type PetStatus, type StockLevels, statusOf } from '../stock-rules.ts';

export type PetstoreDb = Kysely<PetstoreTables>;
export type PetstoreTrx = Transaction<PetstoreTables>;

/** What every store operation is given: the database, its dialect and the clock. */
export interface StoreContext {
  readonly database: Database<PetstoreTables>;
  readonly db: PetstoreDb;
  readonly dialect: Dialect;
  readonly clock: Clock;
  /** Counts webhook messages enqueued, so the store can wake the worker after they commit. */
  readonly events?: { enqueued: number };
}

export interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status: PetStatus;
}
export interface Category {
  id: number;
  name: string;
  description?: string;
}
export interface Order {
  id: number;
  petId: number;
  quantity: number;
  shipDate?: string;
  complete: boolean;
}
export interface InventoryItem {
  petId: number;
  quantity: number;
  status: PetStatus;
}

/** A resource and the version of its row(s) as read or written: what its ETag is made of. */
export interface Versioned<T> {
  resource: T;
  version: number;
}

/** A page of a list, with the cursor of the next page when there is one. */
export interface Page<T> {
  items: T[];
  next: string | null;
}

export function toPet(row: { id: number; name: string; category_id: number; status: string }): Pet {
  return { id: row.id, name: row.name, categoryId: row.category_id, status: row.status as PetStatus };
}

export function toCategory(row: { id: number; name: string; description: string | null }): Category {
  return row.description === null
    ? { id: row.id, name: row.name }
    : { id: row.id, name: row.name, description: row.description };
}

export function toOrder(row: {
  id: number;
  pet_id: number;
  quantity: number;
  ship_date: string | null;
  complete: number | boolean;
}): Order {
  const order: Order = {
    id: row.id,
    petId: row.pet_id,
    quantity: row.quantity,
    complete: Boolean(row.complete),
  };
  if (row.ship_date !== null) order.shipDate = row.ship_date;
  return order;
}

export function toInventoryItem(row: { pet_id: number; quantity: number; status: string }): InventoryItem {
  return { petId: row.pet_id, quantity: row.quantity, status: row.status as PetStatus };
}

/**
 * Moves a pet's stock levels by the given deltas in one guarded UPDATE (refused, returning
 * undefined, when stock would go below zero), bumping the entry's version in the same statement,
 * and writes the status the state table gives. The row stays locked until the transaction ends,
 * so the status written matches the levels.
 */
export async function shiftStock(
  trx: PetstoreTrx,
  petId: number,
  stockDelta: number,
  reservedDelta: number,
): Promise<(StockLevels & { status: PetStatus; version: number }) | undefined> {
  const row = await trx
    .updateTable('inventory')
    .set((eb) => ({
      quantity: eb('quantity', '+', stockDelta),
      reserved: eb('reserved', '+', reservedDelta),
      version: eb('version', '+', 1),
    }))
    .where('pet_id', '=', petId)
    .where((eb) => eb(eb('quantity', '+', stockDelta), '>=', 0))
    // status is not set by this statement: RETURNING gives the one before the change.
    .returning(['quantity', 'reserved', 'status', 'version'])
    .executeTakeFirst();
  if (!row) return undefined;
  const levels = await writeStatus(trx, petId, { stock: row.quantity, reserved: row.reserved }, row.status);
  return { ...levels, version: row.version };
}

/**
 * Writes the status the state table gives for new levels, when it differs from `was`. A pet's
 * representation shows that status, so the pet's version moves with it (its ETag changes exactly
 * when what it shows does); the inventory row is locked first, as in every change of both rows.
 */
export async function writeStatus(
  trx: PetstoreTrx,
  petId: number,
  levels: StockLevels,
  was: string,
): Promise<StockLevels & { status: PetStatus }> {
  const status = statusOf(levels);
  if (status !== was) {
    await trx.updateTable('inventory').set({ status }).where('pet_id', '=', petId).execute();
    await trx
      .updateTable('pets')
      .set((eb) => ({ version: eb('version', '+', 1) }))
      .where('id', '=', petId)
      .execute();
  }
  return { ...levels, status };
}

/** Cursors are opaque to clients: base64url of the last id of the previous page. */
export function encodeCursor(lastId: number): string {
  return Buffer.from(`after:${lastId}`).toString('base64url');
}

/** The id a page starts after; a cursor the server did not make is refused. */
export function decodeCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  const match = /^after:(\d{1,16})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) {
    throw petstoreErrors.error(
      'validation_failed',
      'Query parameter cursor is not valid. Use the URL from the Link header (rel="next") as it is.',
    );
  }
  return Number(match[1]);
}

export function pageOf<T extends object>(rows: T[], limit: number, idOf: (row: T) => number): Page<T> {
  if (rows.length <= limit) return { items: rows, next: null };
  const items = rows.slice(0, limit);
  return { items, next: encodeCursor(idOf(items[items.length - 1] as T)) };
}

/** Runs `work` in the caller's transaction when there is one, else in a new one. */
export function inTransaction<T>(
  ctx: StoreContext,
  outer: PetstoreTrx | undefined,
  work: (trx: PetstoreTrx) => Promise<T>,
): Promise<T> {
  return outer ? work(outer) : transact(ctx.db, work);
}
