import type { PetStatus } from '../stock-rules.ts';

/** The Petstore's resources as the API shows them, and how each is read from its row. */

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

/**
 * An If-Match check, run on a row's version inside the change's transaction with the row locked:
 * it throws when the version is not one the client named (routes/etag.ts makes it).
 */
export type VersionCheck = (version: number) => void;

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
