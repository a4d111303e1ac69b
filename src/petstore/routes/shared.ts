import type { FastifyReply } from 'fastify';
import type { Clock } from '../../lib/clock.ts';
import { type HeaderSpec, type ParameterSpec, ref } from '../../lib/http-api/index.ts';
import { MAX_ID } from '../schemas.ts';
import type { KeyService } from '../security/key-service.ts';
import type { Page, PetstoreStore } from '../store/index.ts';

/** What Petstore route handlers are given. */
export interface PetstoreDeps {
  readonly store: PetstoreStore;
  readonly clock: Clock;
  readonly deprecation: { readonly deprecatedAt: Date; readonly sunsetAt: Date };
  readonly keys: KeyService;
  /** How long an Idempotency-Key is remembered. */
  readonly idempotencyTtlMs: number;
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

export const linkHeader: Record<string, HeaderSpec> = {
  Link: {
    description: 'The next page, as `<url>; rel="next"`; absent on the last page.',
    schema: { type: 'string' },
  },
};

export const locationHeader: Record<string, HeaderSpec> = {
  Location: { description: 'Path of the created resource', schema: { type: 'string' } },
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
