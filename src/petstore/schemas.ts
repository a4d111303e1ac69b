import { type JsonSchema, ref } from '../lib/http-api/index.ts';
import { EVENT_FILTERS, PETSTORE_EVENT_TYPES } from './events/event-types.ts';

/**
 * The seed's resources as named schemas, with the constraints the project chose (docs/decisions/petstore.md,
 * "Petstore constraints"). Ids are int64 on the wire but capped at 2^53 − 1 so every JSON client
 * reads them exactly.
 */
export const MAX_ID = Number.MAX_SAFE_INTEGER;
export const MAX_ORDER_QUANTITY = 10_000;
export const MAX_STOCK = 1_000_000;

const id = (description: string): JsonSchema => ({
  type: 'integer',
  format: 'int64',
  minimum: 1,
  maximum: MAX_ID,
  description,
  // The id a fresh Petstore gives its first resource of each kind (see request-examples.ts).
  example: 1,
});

const name = (description: string, example: string): JsonSchema => ({
  type: 'string',
  minLength: 1,
  maxLength: 100,
  pattern: '\\S',
  description: `${description}. 1–100 characters, not only spaces.`,
  example,
});

const petProperties = {
  name: name("The animal's name", 'Rex'),
  categoryId: id('Identifier of the category the animal belongs to'),
  status: ref('PetStatus'),
};

const categoryProperties = {
  name: name('Category name (for example a kind of animal), unique regardless of case', 'Dogs'),
  description: {
    type: 'string',
    maxLength: 500,
    description: 'Short description of the category, at most 500 characters',
    example: 'Loyal companions',
  },
};

const dateTime = (description: string): JsonSchema => ({ type: 'string', format: 'date-time', description });

const subscriptionProperties = {
  id: id('Identifier of the subscription'),
  url: {
    type: 'string',
    description: 'Where events are POSTed',
    example: 'https://example.com/petstore-hooks',
  },
  eventTypes: {
    type: 'array',
    items: ref('WebhookEventFilter'),
    description: 'The events sent to it',
  },
  description: { type: 'string', description: 'What the subscription is for' },
  createdAt: dateTime('When it was created'),
};

/** The webhook subscriptions API's schemas and the events it sends (docs/webhooks.md). */
const webhookSchemas: Record<string, JsonSchema> = {
  WebhookEventType: {
    type: 'string',
    enum: Object.keys(PETSTORE_EVENT_TYPES),
    description: Object.entries(PETSTORE_EVENT_TYPES)
      .map(([type, meaning]) => `\`${type}\`: ${meaning}`)
      .join(' '),
    example: 'pet.created',
  },
  WebhookEventFilter: {
    type: 'string',
    enum: [...EVENT_FILTERS],
    description: 'An event type, every event of a resource (`pet.*`), or every event (`*`).',
    example: 'pet.*',
  },
  NewWebhookSubscription: {
    type: 'object',
    required: ['url', 'eventTypes'],
    properties: {
      url: {
        type: 'string',
        minLength: 1,
        maxLength: 2000,
        description:
          'An absolute https:// URL (http:// only to a loopback host), without credentials or fragment. Where it may point depends on PETSTORE_WEBHOOK_TARGETS.',
        example: 'https://example.com/petstore-hooks',
      },
      eventTypes: {
        type: 'array',
        minItems: 1,
        maxItems: 20,
        items: ref('WebhookEventFilter'),
        description: 'The events to send',
      },
      description: {
        type: 'string',
        maxLength: 500,
        description: 'What the subscription is for, at most 500 characters',
      },
    },
    additionalProperties: false,
  },
  WebhookSubscription: {
    type: 'object',
    required: ['id', 'url', 'eventTypes', 'createdAt'],
    description: 'A webhook subscription, without its signing secret.',
    properties: subscriptionProperties,
    additionalProperties: false,
  },
  CreatedWebhookSubscription: {
    type: 'object',
    required: ['id', 'url', 'eventTypes', 'createdAt', 'secret'],
    description: 'A new subscription, with its signing secret: shown in this answer only.',
    properties: {
      ...subscriptionProperties,
      secret: {
        type: 'string',
        pattern: '^whsec_[A-Za-z0-9+/]{32,}={0,2}$',
        description:
          'The Standard Webhooks signing secret (`whsec_` and base64): verify `webhook-signature` with it. Shown once.',
      },
    },
    additionalProperties: false,
  },
  WebhookDelivery: {
    type: 'object',
    required: [
      'id',
      'type',
      'state',
      'attempts',
      'nextAttemptAt',
      'lastStatus',
      'lastError',
      'createdAt',
      'deliveredAt',
      'payload',
      'log',
    ],
    description: 'One message to one subscription and its delivery log.',
    properties: {
      id: {
        type: 'string',
        pattern: '^msg_[A-Za-z0-9_-]{24}$',
        description: 'The message id: the `webhook-id` header, the same on every attempt',
      },
      type: ref('WebhookEventType'),
      state: {
        type: 'string',
        enum: ['pending', 'delivered', 'failed'],
        description: 'pending until a 2xx answer (delivered) or the retry schedule runs out (failed)',
      },
      attempts: { type: 'integer', minimum: 0, description: 'Attempts since it was (re)queued' },
      nextAttemptAt: { ...dateTime('When it is attempted next; null unless pending'), nullable: true },
      lastStatus: { type: 'integer', nullable: true, description: 'HTTP status of the last attempt' },
      lastError: { type: 'string', nullable: true, description: 'Why the last attempt failed' },
      createdAt: dateTime('When the change happened'),
      deliveredAt: { ...dateTime('When a receiver first answered 2xx'), nullable: true },
      // Free-form here: the exact body per event type is in the callbacks of createWebhookSubscription
      // (a response schema with anyOf would make the serializer pick one branch and drop fields).
      payload: {
        type: 'object',
        additionalProperties: true,
        description: 'The body as sent: a WebhookEvent (`type`, `timestamp`, `data`)',
      },
      log: {
        type: 'array',
        description: 'Every attempt, oldest first',
        items: {
          type: 'object',
          required: ['attempt', 'at', 'statusCode', 'durationMs', 'error', 'ok'],
          properties: {
            attempt: { type: 'integer', minimum: 1 },
            at: dateTime('When the attempt was made'),
            statusCode: { type: 'integer', nullable: true },
            durationMs: { type: 'integer', minimum: 0 },
            error: { type: 'string', nullable: true },
            ok: { type: 'boolean' },
          },
          additionalProperties: false,
        },
      },
    },
    additionalProperties: false,
  },
  WebhookEvent: {
    type: 'object',
    required: ['type', 'timestamp', 'data'],
    description:
      'The body of every webhook (Standard Webhooks): the event type, when the change happened, and the resource as the API represents it — a Pet for `pet.*`, a Category for `category.*`, an Order for `order.*`, an InventoryItem for `inventory.updated`. Deleted and cancelled resources are sent as they were.',
    properties: {
      type: ref('WebhookEventType'),
      timestamp: dateTime('When the change was made'),
      data: {
        anyOf: [ref('Pet'), ref('Category'), ref('Order'), ref('InventoryItem')],
      },
    },
    additionalProperties: false,
  },
};

/** What an API key shows, in lists and (with its secret) when created. */
const API_KEY_PROPERTIES = {
  id: id('Identifier of the key'),
  name: { type: 'string', description: 'What the key is for' },
  prefix: { type: 'string', description: 'The first 11 characters of the key', example: 'pk_Xb3kP0qz' },
  scopes: { type: 'array', items: ref('Scope') },
  createdAt: { type: 'string', format: 'date-time' },
};

export const schemas: Record<string, JsonSchema> = {
  PetStatus: {
    type: 'string',
    enum: ['available', 'pending', 'sold'],
    description:
      'Status of the animal. It follows stock and open orders (see the state table in the API description): `available` while stock is above zero, `pending` while stock is zero and open orders hold the last units, `sold` when stock is zero and no order is open.',
    example: 'available',
  },
  NewPet: {
    type: 'object',
    description:
      'Input shape for a pet. `status` may be `available` (the default: one unit in stock) or `sold` (no stock); `pending` only ever comes from open orders.',
    required: ['name', 'categoryId'],
    properties: petProperties,
    additionalProperties: false,
  },
  // Answers (Pet, Category, Order, InventoryItem) list as required every property the service always
  // sends, so generated clients type them exactly; the input shapes keep the seed's optionality
  // (docs/decisions/petstore.md, "Answers list what they always carry").
  Pet: {
    type: 'object',
    required: ['id', 'name', 'categoryId', 'status'],
    properties: { id: id('Unique identifier assigned on creation'), ...petProperties },
  },
  Pets: { type: 'array', description: 'A list of pets.', items: ref('Pet') },
  NewCategory: {
    type: 'object',
    description: 'Input shape for a category.',
    required: ['name'],
    properties: categoryProperties,
    additionalProperties: false,
  },
  Category: {
    type: 'object',
    required: ['id', 'name'],
    properties: { id: id('Unique identifier assigned on creation'), ...categoryProperties },
  },
  NewOrder: {
    type: 'object',
    description:
      'Input shape for placing an order. Not in the seed: the project added it so the body says what a client sends.',
    required: ['petId', 'quantity'],
    properties: {
      petId: id('Identifier of the animal to order'),
      quantity: {
        type: 'integer',
        format: 'int32',
        minimum: 1,
        maximum: MAX_ORDER_QUANTITY,
        description: `Number of units ordered, 1 to ${MAX_ORDER_QUANTITY}, and no more than the stock`,
        example: 1,
      },
      shipDate: {
        type: 'string',
        format: 'date-time',
        description: 'Expected ship date (ISO 8601). Completing the order replaces it with the actual date.',
        example: '2026-12-01T10:00:00Z',
      },
    },
    additionalProperties: false,
  },
  Order: {
    type: 'object',
    description:
      'An order as the service answers it. `shipDate` is absent while an open order was placed without one.',
    required: ['id', 'petId', 'quantity', 'complete'],
    properties: {
      id: id('Unique order identifier'),
      petId: id('Identifier of the animal in the order'),
      quantity: {
        type: 'integer',
        format: 'int32',
        minimum: 1,
        maximum: MAX_ORDER_QUANTITY,
        description: 'Number of units ordered',
        example: 1,
      },
      shipDate: {
        type: 'string',
        format: 'date-time',
        description: 'Expected ship date while open; the actual ship date once complete',
        example: '2026-12-01T10:00:00.000Z',
      },
      complete: { type: 'boolean', description: 'Whether the order has been fulfilled', example: false },
    },
  },
  InventoryItem: {
    type: 'object',
    required: ['petId', 'quantity', 'status'],
    properties: {
      petId: id('Identifier of the animal this entry tracks'),
      quantity: {
        type: 'integer',
        format: 'int32',
        minimum: 0,
        maximum: MAX_STOCK,
        description:
          'Current stock count: units that can still be ordered (units held by open orders are not in it)',
        example: 12,
      },
      status: ref('PetStatus'),
    },
  },
  InventoryUpdate: {
    type: 'object',
    required: ['quantity'],
    properties: {
      quantity: {
        type: 'integer',
        format: 'int32',
        minimum: 0,
        maximum: MAX_STOCK,
        description: `The new stock count, 0 to ${MAX_STOCK}: units available to order on top of those held by open orders`,
        example: 50,
      },
    },
    additionalProperties: false,
  },
  Scope: {
    type: 'string',
    enum: ['pets:write', 'store', 'admin'],
    description:
      'What a key may do: `pets:write` changes pets and categories, `store` is store staff (orders and inventory), `admin` manages keys and webhook subscriptions.',
    example: 'pets:write',
  },
  NewApiKey: {
    type: 'object',
    required: ['name', 'scopes'],
    properties: {
      name: name('What the key is for, so people can tell keys apart', 'shop front'),
      scopes: {
        type: 'array',
        minItems: 1,
        maxItems: 3,
        uniqueItems: true,
        items: ref('Scope'),
        description: 'The scopes the key gets, at least one',
      },
    },
    additionalProperties: false,
  },
  ApiKey: {
    type: 'object',
    required: ['id', 'name', 'prefix', 'scopes', 'createdAt'],
    description: 'An API key as lists show it: never its secret, only its first characters.',
    properties: {
      ...API_KEY_PROPERTIES,
      revokedAt: {
        type: 'string',
        format: 'date-time',
        description: 'When the key was revoked; absent while live',
      },
    },
    additionalProperties: false,
  },
  CreatedApiKey: {
    type: 'object',
    required: ['id', 'name', 'prefix', 'scopes', 'createdAt', 'secret'],
    description: 'A new key, with its secret: shown in this answer only, stored only as a SHA-256 hash.',
    properties: {
      ...API_KEY_PROPERTIES,
      secret: {
        type: 'string',
        pattern: '^pk_[A-Za-z0-9_-]{43}$',
        description: 'The key, to send as `Authorization: Bearer <secret>`. Shown once.',
      },
    },
    additionalProperties: false,
  },
  ...webhookSchemas,
  Error: {
    type: 'object',
    required: ['code', 'message', 'status'],
    properties: {
      code: {
        type: 'string',
        pattern: '^[a-z][a-z0-9_]*$',
        description: 'Machine-readable error code (listed in docs/errors.md)',
        example: 'pet_not_found',
      },
      message: {
        type: 'string',
        description: 'Human-readable description of the error and what to do about it',
        example: 'No pet has id 42. List pets with GET /pets to find its id.',
      },
      status: {
        type: 'integer',
        minimum: 400,
        maximum: 599,
        description: 'The HTTP status code',
        example: 404,
      },
    },
  },
};
