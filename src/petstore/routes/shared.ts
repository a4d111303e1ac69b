import type { FastifyReply } from 'fastify';
import type { Clock } from '../../lib/clock.ts';
import { type HeaderSpec, type ParameterSpec, ref } from '../../lib/http-api/index.ts';
import { petstoreErrors } from '../errors.ts';
import type { WebhookSettings } from '../events/index.ts';
import { MAX_ID } from '../schemas.ts';
import { bearerSecret } from '../security/install-guard.ts';
import type { KeyService } from '../security/key-service.ts';
import type { PetstoreTrx } from '../store/context.ts';
import type { Page, PetstoreStore } from '../store/index.ts';

/** What Petstore route handlers are given. */
export interface PetstoreDeps {
  readonly store: PetstoreStore;
  readonly clock: Clock;
  readonly deprecation: { readonly deprecatedAt: Date; readonly sunsetAt: Date };
  readonly keys: KeyService;
  /** How long an Idempotency-Key is remembered. */
  readonly idempotencyTtlMs: number;
  /** Webhook settings; undefined when this server keeps no sealing key (see app.ts). */
  readonly webhooks: WebhookSettings | undefined;
  /** Tells the delivery worker a message is due now (after a manual redelivery). */
  readonly wakeWebhooks: () => void;
}

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export const idParam = (name: string, what: string): ParameterSpec => ({
  name,
  in: 'path',
  description: `Identifier of the ${what}`,
  schema: { type: 'integer', format: 'int64', minimum: 1, maximum: MAX_ID },
});

export const pageParams: ParameterSpec[] = [
  {
    name: 'limit',
    in: 'query',
    description: `Page size, 1 to ${MAX_PAGE_SIZE}`,
    schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE },
  },
  {
    name: 'cursor',
    in: 'query',
    description: 'Where the page starts. Opaque: take it from the previous page\'s Link header (rel="next").',
    schema: { type: 'string', minLength: 1, maxLength: 200 },
  },
];

/** A response header whose value is text. */
export const stringHeader = (description: string): HeaderSpec => ({
  description,
  schema: { type: 'string' },
});

export const linkHeader: Record<string, HeaderSpec> = {
  Link: stringHeader('The next page, as `<url>; rel="next"`; absent on the last page.'),
};

export const locationHeader: Record<string, HeaderSpec> = {
  Location: stringHeader('Path of the created resource'),
};

/** The answer of a create that takes an Idempotency-Key. */
export const createdHeaders: Record<string, HeaderSpec> = {
  ...locationHeader,
  'Idempotent-Replayed': {
    description:
      '`true` when this is the remembered answer to an earlier request with the same Idempotency-Key',
    schema: { type: 'string', enum: ['true'] },
  },
};

/** Sends a page: the items as the body, the next page's URL in `Link: rel="next"`. */
export function sendPage<T>(
  reply: FastifyReply,
  path: string,
  query: Record<string, unknown>,
  page: Page<T>,
): T[] {
  if (page.next !== null) {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) {
      if (key === 'cursor' || value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) params.append(key, String(v));
    }
    params.set('cursor', page.next);
    reply.header('link', `<${path}?${params}>; rel="next"`);
  }
  return page.items;
}

export const errorBody = ref('Error');

export const idempotencyKeyParam: ParameterSpec = {
  name: 'Idempotency-Key',
  in: 'header',
  description:
    'Makes retries safe: a retry with the same key and body (by the same API key) answers the first answer again, with `Idempotent-Replayed: true`, and creates nothing; the same key with another body is 422 `idempotency_key_reused`. 1–255 visible ASCII characters, for example a UUID. Remembered for the time the API description states.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
};

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * Runs a create, once per Idempotency-Key when the request has one, and sends its answer (the
 * remembered one on a retry).
 */
export async function sendCreated<T>(
  request: { headers: Readonly<Record<string, string | string[] | undefined>>; body: unknown },
  reply: FastifyReply,
  deps: PetstoreDeps,
  operation: string,
  create: (trx?: PetstoreTrx) => Promise<T>,
  locationOf: (created: T) => string,
): Promise<unknown> {
  const key = request.headers['idempotency-key'];
  if (key === undefined) {
    const created = await create();
    reply.code(201).header('location', locationOf(created));
    return created;
  }
  if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key)) {
    throw petstoreErrors.error(
      'validation_failed',
      'Header Idempotency-Key must be 1 to 255 visible ASCII characters (for example a UUID). Fix the request and send it again.',
    );
  }
  const secret = bearerSecret(request.headers.authorization);
  const apiKeyId = secret === undefined ? 0 : (deps.keys.known(secret)?.id ?? 0);
  const answer = await deps.store.runIdempotent(
    { apiKeyId, operation, key, body: request.body, ttlMs: deps.idempotencyTtlMs },
    async (trx) => {
      const created = await create(trx);
      return { status: 201, body: created, location: locationOf(created) };
    },
  );
  reply.code(answer.status);
  if (answer.location !== null) reply.header('location', answer.location);
  if (answer.replayed) reply.header('idempotent-replayed', 'true');
  return answer.body;
}
