import { stringify } from 'yaml';
import { buildOpenApiDocument, KENNEL_LICENSE, ref } from '../lib/http-api/index.ts';
import { petstoreErrors } from './errors.ts';
import { PETSTORE_EVENT_TYPES } from './events/event-types.ts';
import { INTERFACE_VERSION } from './interface-version.ts';
import { DEFAULT_LIMITS, type PetstoreLimits } from './limits.ts';
import { applyRequestExamples } from './request-examples.ts';
import type { PetstoreDeps } from './routes/index.ts';
import { petstoreOperations } from './routes/index.ts';
import { MAX_PAGE_SIZE } from './routes/shared.ts';
import { schemas } from './schemas.ts';
import { ORDER_TRANSITIONS, STATUS_TABLE } from './stock-rules.ts';

export { INTERFACE_VERSION };
export const BODY_LIMIT_BYTES = 1024 * 1024;

function description(limits: PetstoreLimits): string {
  const statusRows = STATUS_TABLE.map((r) => `| ${r.when} | \`${r.status}\` |`).join('\n');
  const orderRows = ORDER_TRANSITIONS.map((t) => {
    const q = 'q';
    const delta = (d: (n: number) => number) => {
      const v = d(1);
      return v === 0 ? '—' : v > 0 ? `+${q}` : `−${q}`;
    };
    return `| ${t.from ?? '(none)'} | ${t.event} | ${t.to} | ${delta(t.stockDelta)} | ${delta(t.reservedDelta)} | ${t.also} |`;
  }).join('\n');
  return `Pets, their categories, orders for them and a stock inventory per pet.

## Trying it

The examples work on a fresh Petstore, in order: create a category, a pet in it, then an order for it. A fresh Petstore gives the first of each id 1, and the examples name id 1; key 1 is the admin key the first start printed (authorize with it), so the example that revokes a key names key 2, the one the create-key example makes. A pet with orders cannot be deleted, nor its category: to try the deletes, cancel the order instead of completing it.

## Stock, orders and statuses

\`stock\` is InventoryItem.quantity, the units that can still be ordered. Units held by open orders (of quantity q) are counted apart. Pet.status and InventoryItem.status are always equal and follow this table (first matching row):

| condition | status |
|---|---|
${statusRows}

Orders move stock like this; any other event is refused (409 \`order_already_complete\`):

| order from | event | order to | stock | held by open orders | also |
|---|---|---|---|---|---|
${orderRows}

## Errors

Every answer that is not 2xx has the \`Error\` body \`{ code, message, status }\`; \`status\` equals the HTTP status and \`message\` says what to do. Each operation lists its codes per status in \`x-error-codes\`.

## Authentication

Reading pets and categories is public. Everything else needs an API key, sent as \`Authorization: Bearer <key>\`, holding the scope the operation names in \`x-required-scopes\` (and its description): \`pets:write\` to change pets and categories, \`store\` (store staff) for orders and the inventory, \`admin\` to manage keys (and webhook subscriptions). Without a valid key the answer is 401 with \`WWW-Authenticate: Bearer\`; with a key that lacks the scope, 403. Keys look like \`pk_\` and 43 characters; an admin creates them with \`POST /keys\` or \`kennel keys create\`, and the secret is shown once. A revoked key stops working at once on the server that revoked it and within ${limits.keyCacheMs / 1000} s on others sharing its database.

## Limits

- Rate limits, per fixed window: ${limits.perKey.quota} requests per ${limits.perKey.windowSeconds} s per API key, ${limits.perAddress.quota} per ${limits.perAddress.windowSeconds} s per client address for requests without a key. Every answer carries \`RateLimit-Policy\` (e.g. \`"key";q=${limits.perKey.quota};w=${limits.perKey.windowSeconds}\`) and \`RateLimit\` (\`"key";r=<left>;t=<seconds to the reset>\`), the IETF RateLimit header fields; above the limit the answer is 429 \`rate_limited\` with \`Retry-After\`.
- Bodies up to ${BODY_LIMIT_BYTES} bytes (413 \`body_too_large\` above).
- Lists return at most ${MAX_PAGE_SIZE} items per page (default 20); follow \`Link: rel="next"\`.
- A request may take ${limits.requestTimeoutMs / 1000} s; past that it is answered 503 \`request_timeout\` (a change may still have been made: read before retrying, or retry with the same Idempotency-Key).
- When the database is unreachable or the connection to it is cut mid-request, the answer is 503 \`database_unavailable\` with \`Retry-After\` (again, a change may still have been made).
- Its headers must arrive within ${limits.headersTimeoutMs / 1000} s and the whole request, body included, within ${limits.receiveTimeoutMs / 1000} s; past that it is answered 408 \`receive_timeout\` and the connection is closed.

## Safe retries and concurrent edits

\`POST /pets\` and \`POST /store/orders\` take an \`Idempotency-Key\` header (1–255 visible characters): a retry with the same key and the same body, by the same API key, answers the first answer again (with \`Idempotent-Replayed: true\`) and creates nothing; the same key with another body is refused with 422 \`idempotency_key_reused\`. Keys are remembered for ${limits.idempotencyTtlMs / 3_600_000} hours after the first answer. Only successful answers are remembered: after an error the same key may be used again.

Single reads and updates answer with a strong \`ETag\`; a single read sent with \`If-None-Match\` naming it answers 304 without a body. \`PUT\` and \`DELETE\` on pets, categories and inventory entries honour \`If-Match\`: when it names none of the resource's current ETags the change is refused with 412 \`precondition_failed\`, so two clients cannot silently overwrite each other.

## Versioning

This is version ${INTERFACE_VERSION} of the interface, described in OpenAPI 3.0.3. Every answer names it in the \`API-Version\` header. A client may send \`API-Version\` with the major version it was written for (\`1\`, or a full \`1.x.y\`); another major version is refused with 400 \`unsupported_version\`. Within 1.x changes are additive only: new operations, new optional request fields, new response fields, new error codes on new conditions; nothing is removed or renamed and no field changes meaning. A deprecated operation is marked \`deprecated\` with its sunset date in \`x-sunset\`, keeps working at least until that date, and answers with \`Deprecation\`, \`Sunset\` and \`Link: rel="successor-version"\` headers until then.`;
}

/** The Petstore's OpenAPI 3.0.3 document, built from the operations the server registers. */
export function petstoreDocument(
  deprecation: PetstoreDeps['deprecation'],
  limits: PetstoreLimits = DEFAULT_LIMITS,
): Record<string, unknown> {
  const operations = petstoreOperations(deprecation);
  const document = buildOpenApiDocument({
    info: {
      title: 'Petstore API',
      version: INTERFACE_VERSION,
      license: KENNEL_LICENSE,
      description: description(limits),
    },
    servers: [{ url: '/', description: 'This server' }],
    tags: [
      { name: 'Pets', description: 'Pets and the categories they belong to' },
      { name: 'Store', description: 'Orders and the stock inventory' },
      { name: 'Admin', description: 'API keys and webhook subscriptions' },
    ],
    schemas,
    operations,
    errors: petstoreErrors.specs,
    errorSchema: 'Error',
    securitySchemes: {
      apiKey: {
        type: 'http',
        scheme: 'bearer',
        description: 'A Petstore API key (`pk_…`), sent as `Authorization: Bearer <key>`',
      },
    },
  });
  // Each operation's requirement, from the same `access` the guard enforces: public reads need
  // nothing, the rest a key holding one scope. OpenAPI 3.0.3 lets a requirement list scopes only
  // for oauth2 and OpenID Connect schemes (and the linters hold it to that), so the scope goes
  // in `x-required-scopes` and the description, and the requirement names the bearer scheme alone.
  const paths = document.paths as Record<string, Record<string, Record<string, unknown>>>;
  for (const op of operations) {
    const entry = paths[op.path]?.[op.method.toLowerCase()];
    const access = op.access ?? 'public';
    if (!entry) continue;
    if (access === 'public') entry.security = [];
    else {
      entry.security = [{ apiKey: [] }];
      entry['x-required-scopes'] = [access];
      entry.description = `${entry.description}\n\nNeeds an API key holding the \`${access}\` scope.`;
    }
    // The guard's headers, on every answer it lets through or refuses.
    for (const [status, response] of Object.entries(
      entry.responses as Record<string, { headers?: object }>,
    )) {
      response.headers = { ...response.headers, ...GUARD_HEADERS, ...(STATUS_HEADERS[status] ?? {}) };
    }
  }
  applyRequestExamples(paths);
  const subscribe = paths['/webhooks']?.post;
  if (subscribe) subscribe.callbacks = eventCallbacks();
  return document;
}

const GUARD_HEADERS = {
  'API-Version': {
    description: 'The interface version that answered (see Versioning)',
    schema: { type: 'string', example: INTERFACE_VERSION },
  },
  'RateLimit-Policy': {
    description:
      'The rate-limit policy that applies: `"key"` (per API key) or `"address"` (per client address), with its quota `q` and window `w` in seconds (IETF RateLimit header fields)',
    schema: { type: 'string', example: '"key";q=600;w=60' },
  },
  RateLimit: {
    description: 'Requests `r` left in the current window and seconds `t` until it resets',
    schema: { type: 'string', example: '"key";r=599;t=42' },
  },
};

const STATUS_HEADERS: Record<string, Record<string, unknown>> = {
  '401': {
    'WWW-Authenticate': {
      description: '`Bearer realm="petstore"`, with `error="invalid_token"` when the key sent is not valid',
      schema: { type: 'string' },
    },
  },
  '403': {
    'WWW-Authenticate': {
      description: '`Bearer realm="petstore", error="insufficient_scope", scope="<the scope needed>"`',
      schema: { type: 'string' },
    },
  },
  '429': {
    'Retry-After': {
      description: 'Seconds until the window resets',
      schema: { type: 'integer', minimum: 1 },
    },
  },
};

const PAYLOAD_SCHEMA: Record<string, string> = {
  pet: 'Pet',
  category: 'Category',
  order: 'Order',
  inventory: 'InventoryItem',
};

/**
 * The events, as OpenAPI 3.0.3 can say it (it has no `webhooks` object): one callback per event
 * type on the subscription-create operation, POSTed to the subscription's `url` with the exact
 * body and the three Standard Webhooks headers.
 */
function eventCallbacks(): Record<string, unknown> {
  const header = (name: string, description: string) => ({
    name,
    in: 'header',
    required: true,
    description,
    schema: { type: 'string' },
  });
  return Object.fromEntries(
    Object.entries(PETSTORE_EVENT_TYPES).map(([type, meaning]) => [
      type,
      {
        '{$request.body#/url}': {
          post: {
            summary: type,
            description: `${meaning} Sent to subscriptions whose eventTypes select \`${type}\`.`,
            parameters: [
              header(
                'webhook-id',
                'The message id (`msg_…`): the same on every attempt, so receivers deduplicate',
              ),
              header('webhook-timestamp', 'When this attempt was signed, in Unix seconds'),
              header(
                'webhook-signature',
                '`v1,` and the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` under the subscription secret',
              ),
            ],
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  // The common envelope, narrowed to this event's type and resource.
                  schema: {
                    allOf: [
                      ref('WebhookEvent'),
                      {
                        type: 'object',
                        properties: {
                          type: { type: 'string', enum: [type] },
                          data: ref(PAYLOAD_SCHEMA[type.split('.')[0] as string] as string),
                        },
                      },
                    ],
                  },
                },
              },
            },
            // Authenticity is the `webhook-signature` header the receiver verifies, which no
            // OpenAPI security scheme describes: the requirement is explicitly empty.
            security: [],
            responses: {
              '2XX': {
                description: 'Received. Any other answer, or none within the time limit, is retried.',
              },
              '4XX': {
                description:
                  'Refused by the receiver (e.g. a signature it could not verify): retried on the same schedule as any other answer that is not 2xx, then marked failed.',
              },
            },
          },
        },
      },
    ]),
  );
}

export function toYaml(document: Record<string, unknown>): string {
  return stringify(document, { aliasDuplicateObjects: false, lineWidth: 0 });
}
