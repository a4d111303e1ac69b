import type { BareResponses } from './bare-server.ts';
import {
  type Answer,
  contentHeaders,
  call as httpCall,
  expectCall as httpExpectCall,
} from './support/http.ts';

/**
 * The Petstore suite's data and reference answers: what is seeded through the API, what the
 * Petstore answers on each benchmarked request, and the bare server's copy of those answers.
 */
export const PETS = 30;

/**
 * The admin key every benchmarked Petstore registers (PETSTORE_ADMIN_KEY): seeding, checks and
 * the authenticated requests under load send it.
 */
export const BENCH_KEY = `pk_${'b'.repeat(43)}`;
export const AUTHORIZATION = `Bearer ${BENCH_KEY}`;

/**
 * Headers that move from one answer to the next: `RateLimit` (requests left, seconds to the reset)
 * and `X-Request-Id` (on every answer since issue 14, one per request).
 */
const VARYING_HEADERS = ['ratelimit', 'x-request-id'];

/** One request with the bench key, read whole. */
export const call = (base: string, method: string, path: string, body?: unknown): Promise<Answer> =>
  httpCall(base, method, path, body, { authorization: AUTHORIZATION });

/** `call`, failing unless the answer has the expected status. */
export const expectCall = (
  base: string,
  method: string,
  path: string,
  status: number,
  body?: unknown,
): Promise<Answer> => httpExpectCall(base, method, path, status, body, { authorization: AUTHORIZATION });

export const MAX_STOCK = 1_000_000;

export type EndpointKey = 'getPet' | 'listPets' | 'placeOrder' | 'getInventory';

export interface Seed {
  /** The pet `GET /pets/{petId}` reads. */
  readonly getPetId: number;
  /** The pet the orders are for; its stock is MAX_STOCK before each order run. */
  readonly orderPetId: number;
}

/** One category and PETS pets, through the API; the last pet gets the maximum stock. */
export async function seedPetstore(url: string): Promise<Seed> {
  const category = await expectCall(url, 'POST', '/categories', 201, {
    name: 'Dogs',
    description: 'Loyal companions',
  });
  const categoryId = (JSON.parse(category.body) as { id: number }).id;
  const ids: number[] = [];
  for (let i = 1; i <= PETS; i++) {
    const name = `Pet ${String(i).padStart(2, '0')}`;
    const pet = await expectCall(url, 'POST', '/pets', 201, { name, categoryId });
    ids.push((JSON.parse(pet.body) as { id: number }).id);
  }
  const seed = { getPetId: ids[0] as number, orderPetId: ids[ids.length - 1] as number };
  await setStock(url, seed.orderPetId, MAX_STOCK);
  return seed;
}

export async function setStock(url: string, petId: number, quantity: number): Promise<void> {
  await expectCall(url, 'PUT', `/store/inventory/${petId}`, 200, { quantity });
}

export async function readStock(url: string, petId: number): Promise<number> {
  const answer = await expectCall(url, 'GET', `/store/inventory/${petId}`, 200);
  return (JSON.parse(answer.body) as { quantity: number }).quantity;
}

export type Reference = Record<EndpointKey, { method: string; path: string; answer: Answer }>;

/** What the Petstore answers on each benchmarked request: what the bare server copies. */
export async function captureAnswers(url: string, seed: Seed): Promise<Reference> {
  const getPet = await expectCall(url, 'GET', `/pets/${seed.getPetId}`, 200);
  const listPets = await expectCall(url, 'GET', '/pets', 200);
  const getInventory = await expectCall(url, 'GET', `/store/inventory/${seed.getPetId}`, 200);
  const items = JSON.parse(listPets.body) as unknown[];
  if (items.length !== 20) throw new Error(`GET /pets answered ${items.length} pets, expected a page of 20`);
  const placeOrder = await expectCall(url, 'POST', '/store/orders', 201, {
    petId: seed.orderPetId,
    quantity: 1,
  });
  return {
    getPet: { method: 'GET', path: `/pets/${seed.getPetId}`, answer: getPet },
    listPets: { method: 'GET', path: '/pets', answer: listPets },
    getInventory: { method: 'GET', path: `/store/inventory/${seed.getPetId}`, answer: getInventory },
    placeOrder: { method: 'POST', path: '/store/orders', answer: placeOrder },
  };
}

/** The bare server's configuration: the GET answers verbatim, orders echoed with new ids. */
export function bareResponses(reference: Reference): BareResponses {
  const fixed = (['getPet', 'listPets', 'getInventory'] as const).map((key) => ({
    method: reference[key].method,
    url: reference[key].path,
    status: reference[key].answer.status,
    headers: contentHeaders(reference[key].answer),
    body: reference[key].answer.body,
  }));
  const order = reference.placeOrder;
  const location = order.answer.headers.location ?? '';
  return {
    fixed,
    orders: [
      {
        method: order.method,
        url: order.path,
        status: order.answer.status,
        headers: contentHeaders(order.answer, ['location']),
        locationPrefix: location.replace(/\d+$/, ''),
      },
    ],
  };
}

/**
 * Checks that `url` answers as the reference does: status, content headers and body bytes, order
 * ids aside. Placing the order for the check takes one unit of stock.
 */
export async function expectSameAnswers(
  url: string,
  reference: Reference,
  who: string,
  keys: readonly EndpointKey[] = ['getPet', 'listPets', 'getInventory', 'placeOrder'],
): Promise<void> {
  const withoutIds = (text: string) => text.replace(/^\{"id":\d+,/, '{"id":0,').replace(/\/\d+$/, '/0');
  const headers = (answer: Answer) =>
    JSON.stringify(
      Object.entries(contentHeaders(answer, VARYING_HEADERS))
        .map(([name, value]) => [name, withoutIds(value)])
        .sort(),
    );
  for (const key of keys) {
    const { method, path, answer: expected } = reference[key];
    const body = method === 'POST' ? (JSON.parse(expected.body) as { petId: number }) : undefined;
    const actual = await call(url, method, path, body && { petId: body.petId, quantity: 1 });
    const same =
      actual.status === expected.status &&
      withoutIds(actual.body) === withoutIds(expected.body) &&
      headers(actual) === headers(expected);
    if (!same) {
      const show = (a: Answer) => `${a.status} ${JSON.stringify(contentHeaders(a))} ${a.body}`;
      throw new Error(
        `${who} answers ${method} ${path} differently from the Petstore on SQLite:\n  expected ${show(expected)}\n  got      ${show(actual)}`,
      );
    }
  }
}

/**
 * Checks that `url` answers the reference's GETs with the same status and body bytes (headers
 * aside): the minimal PostgreSQL service sends only the body, and a Petstore with rate limiting
 * off no rate-limit headers.
 */
export async function expectSameBodies(
  url: string,
  reference: Reference,
  who: string,
  keys: readonly EndpointKey[],
): Promise<void> {
  for (const key of keys) {
    const { method, path, answer: expected } = reference[key];
    const actual = await call(url, method, path);
    if (actual.status !== expected.status || actual.body !== expected.body) {
      throw new Error(
        `${who} answers ${method} ${path} differently from the Petstore on SQLite:\n  expected ${expected.status} ${expected.body}\n  got      ${actual.status} ${actual.body}`,
      );
    }
  }
}
