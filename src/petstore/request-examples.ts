/**
 * The request examples the published reference fills in when someone presses "Test it": bodies,
 * path and query parameters, by operation. Each succeeds against a fresh Petstore (as `npm start`
 * creates it: no categories, pets or orders, and API key 1 is the first admin key) once the
 * examples it builds on have run: the first category, pet, order and webhook subscription a fresh
 * Petstore creates all get id 1, so every example names id 1. Two paths cannot share one Petstore:
 * a completed order keeps its pet (and so its category) from being deleted, and order 1 cannot be
 * both completed and cancelled; each works from a fresh start (test/web/reference-usable.test.ts
 * runs both, on both databases).
 *
 * Header parameters (`Idempotency-Key`, `If-Match`, `If-None-Match`) have no example on purpose:
 * Swagger UI would send them, and a stale ETag or a reused key would turn the example into a 412
 * or a replay. The message id of a redelivery has none either: only a delivery log names one.
 */
export interface RequestExample {
  /** The JSON body, set as the `application/json` example of the request body. */
  readonly body?: unknown;
  /** Parameter values by name (path and query). */
  readonly parameters?: Readonly<Record<string, unknown>>;
}

const first = (name: string) => ({ [name]: 1 });

export const REQUEST_EXAMPLES: Readonly<Record<string, RequestExample>> = {
  createCategory: { body: { name: 'Dogs', description: 'Loyal companions' } },
  getCategory: { parameters: first('categoryId') },
  updateCategory: {
    parameters: first('categoryId'),
    body: { name: 'Dogs', description: 'Loyal companions, every size' },
  },
  deleteCategory: { parameters: first('categoryId') },
  createPet: { body: { name: 'Rex', categoryId: 1, status: 'available' } },
  getPet: { parameters: first('petId') },
  // No `status`: it must equal the pet's current one, which orders and stock move.
  updatePet: { parameters: first('petId'), body: { name: 'Rex', categoryId: 1 } },
  deletePet: { parameters: first('petId') },
  setStock: { parameters: first('petId'), body: { quantity: 50 } },
  getInventory: { parameters: first('petId') },
  placeOrder: { body: { petId: 1, quantity: 1, shipDate: '2026-12-01T10:00:00Z' } },
  getOrder: { parameters: first('orderId') },
  completeOrder: { parameters: first('orderId') },
  cancelOrder: { parameters: first('orderId') },
  createApiKey: { body: { name: 'shop front', scopes: ['pets:write'] } },
  // Key 1 is the admin key the first start made (the one the reader is using): the example
  // revokes key 2, the one createApiKey's example makes.
  revokeApiKey: { parameters: { keyId: 2 } },
  createWebhookSubscription: {
    body: {
      url: 'https://example.com/petstore-hooks',
      eventTypes: ['pet.*'],
      description: 'Shop front cache',
    },
  },
  getWebhookSubscription: { parameters: first('subscriptionId') },
  deleteWebhookSubscription: { parameters: first('subscriptionId') },
  listWebhookDeliveries: { parameters: first('subscriptionId') },
};

type Operations = Record<string, Record<string, Record<string, unknown>>>;
interface Parameter {
  name: string;
  example?: unknown;
}

/**
 * Sets the examples on a built document. An example naming an operation or parameter the
 * document does not have is a mistake in this file, so it throws rather than vanish.
 */
export function applyRequestExamples(
  paths: Operations,
  examples: Readonly<Record<string, RequestExample>> = REQUEST_EXAMPLES,
): void {
  const byId = new Map(
    Object.values(paths).flatMap((item) =>
      Object.values(item).map((op) => [op.operationId as string, op] as const),
    ),
  );
  for (const [operationId, example] of Object.entries(examples)) {
    const op = byId.get(operationId);
    if (!op) throw new Error(`request example for unknown operation ${operationId}`);
    for (const [name, value] of Object.entries(example.parameters ?? {})) {
      const parameter = ((op.parameters ?? []) as Parameter[]).find((p) => p.name === name);
      if (!parameter) throw new Error(`request example for unknown parameter ${operationId} ${name}`);
      parameter.example = value;
    }
    if (example.body !== undefined) {
      const media = (op.requestBody as { content?: Record<string, Record<string, unknown>> } | undefined)
        ?.content?.['application/json'];
      if (!media) throw new Error(`request example for ${operationId}, which takes no JSON body`);
      media.example = example.body;
    }
  }
}
