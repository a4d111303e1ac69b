/**
 * How stock, orders and statuses move: the Petstore's state machine as data. docs/decisions/petstore.md
 * shows the same tables; test/petstore/stock-rules.test.ts walks them row by row.
 *
 * Vocabulary: `stock` is InventoryItem.quantity, the units that can still be ordered; `reserved`
 * is the sum of the quantities of open orders. Units move from stock to reserved when an order is
 * placed, leave reserved when it completes (they are shipped), and return to stock when it is
 * cancelled. Neither ever goes below zero.
 */
export type PetStatus = 'available' | 'pending' | 'sold';

export interface StockLevels {
  readonly stock: number;
  readonly reserved: number;
}

/** Pet.status and InventoryItem.status, always equal: the first row whose condition holds. */
export const STATUS_TABLE: readonly {
  readonly status: PetStatus;
  readonly when: string;
  readonly holds: (levels: StockLevels) => boolean;
}[] = [
  { status: 'available', when: 'stock > 0', holds: (l) => l.stock > 0 },
  {
    status: 'pending',
    when: 'stock = 0 and open orders hold units',
    holds: (l) => l.stock === 0 && l.reserved > 0,
  },
  { status: 'sold', when: 'stock = 0 and no open order', holds: (l) => l.stock === 0 && l.reserved === 0 },
];

export function statusOf(levels: StockLevels): PetStatus {
  const row = STATUS_TABLE.find((r) => r.holds(levels));
  if (!row) throw new Error(`no status for stock ${levels.stock}, reserved ${levels.reserved}`);
  return row.status;
}

export type OrderState = 'open' | 'complete' | 'cancelled';
export type OrderEvent = 'place' | 'complete' | 'cancel';

/**
 * Order transitions and what each does to the pet's stock levels (as deltas, applied in one
 * guarded UPDATE so concurrent orders can never take stock below zero). A missing row is a
 * refusal, answered with `refusal`.
 */
export const ORDER_TRANSITIONS: readonly {
  readonly from: OrderState | null;
  readonly event: OrderEvent;
  readonly to: OrderState;
  readonly stockDelta: (quantity: number) => number;
  readonly reservedDelta: (quantity: number) => number;
  readonly also: string;
}[] = [
  {
    from: null,
    event: 'place',
    to: 'open',
    stockDelta: (q) => -q,
    reservedDelta: (q) => q,
    also: 'refused with insufficient_stock when quantity > stock',
  },
  {
    from: 'open',
    event: 'complete',
    to: 'complete',
    stockDelta: () => 0,
    reservedDelta: (q) => -q,
    also: 'complete = true, shipDate = now',
  },
  {
    from: 'open',
    event: 'cancel',
    to: 'cancelled',
    stockDelta: (q) => q,
    reservedDelta: (q) => -q,
    also: 'the order is deleted; its units return to stock',
  },
];

/** Refusals for events with no row above, by the order's state. */
export const ORDER_REFUSALS: Readonly<Record<OrderState, 'order_already_complete' | 'order_not_found'>> = {
  open: 'order_not_found', // unreachable: every event from open has a row
  complete: 'order_already_complete',
  cancelled: 'order_not_found',
};

export function orderTransition(from: OrderState | null, event: OrderEvent) {
  return ORDER_TRANSITIONS.find((t) => t.from === from && t.event === event);
}

/**
 * What the `status` a client sends on a new pet means: `available` lists one unit (a pet is one
 * animal until stock says otherwise), `sold` lists none, and `pending` is refused because only
 * open orders make a pet pending.
 */
export const INITIAL_STOCK_BY_STATUS: Readonly<Record<PetStatus, number | null>> = {
  available: 1,
  sold: 0,
  pending: null,
};
