/**
 * The events a Petstore webhook subscription can receive (docs/webhooks.md lists them with their
 * payloads). Each is enqueued in the transaction that makes the change, so it exists exactly when
 * the change commits. The payload (`data`) is the resource as the API represents it.
 */
export const PETSTORE_EVENT_TYPES = {
  'pet.created': 'A pet was added (data: the Pet).',
  'pet.updated': "A pet's name or category changed (data: the Pet).",
  'pet.deleted': 'A pet was deleted (data: the Pet as it was).',
  'category.created': 'A category was created (data: the Category).',
  'category.updated': 'A category was changed (data: the Category).',
  'category.deleted': 'A category was deleted (data: the Category as it was).',
  'order.placed': 'An order was placed (data: the Order).',
  'order.completed': 'An order was completed (data: the Order, with its shipDate).',
  'order.cancelled': 'An order was cancelled and deleted (data: the Order as it was).',
  'inventory.updated':
    "A pet's stock or status changed: stock set, or units moved by an order placed, completed or cancelled (data: the InventoryItem after the change).",
} as const;

export type PetstoreEventType = keyof typeof PETSTORE_EVENT_TYPES;

const FAMILIES = [...new Set(Object.keys(PETSTORE_EVENT_TYPES).map((t) => t.split('.')[0] as string))];

/** What a subscription may name: an event type, a family (`pet.*`) or everything (`*`). */
export const EVENT_FILTERS: readonly string[] = [
  '*',
  ...FAMILIES.map((f) => `${f}.*`),
  ...Object.keys(PETSTORE_EVENT_TYPES),
];

/** True when one of a subscription's filters selects the event type. */
export function selects(filters: readonly string[], type: string): boolean {
  const family = `${type.split('.')[0]}.*`;
  return filters.some((f) => f === '*' || f === type || f === family);
}
