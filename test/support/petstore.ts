import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { type Clock, ManualClock } from '../../src/lib/clock.ts';
import {
  buildPetstoreApp,
  DEFAULT_LIMITS,
  ensureAdminKey,
  type PetstoreLimits,
  type PetstoreTables,
  petstoreDocument,
  petstoreMigrations,
} from '../../src/petstore/index.ts';
import { type Database, type Dialect, migrateToLatest, openDatabase } from '../../src/storage/index.ts';
import { ContractChecker } from './contract.ts';
import { createTestStorage, type TestStorage } from './databases.ts';

export const TEST_DEPRECATION = {
  deprecatedAt: new Date('2026-11-01T00:00:00Z'),
  sunsetAt: new Date('2027-06-30T00:00:00Z'),
};

export interface Answer<T = unknown> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
  text: string;
}

/** A Petstore on a fresh database, every answer checked against its OpenAPI document. */
export interface TestPetstore {
  readonly app: FastifyInstance;
  readonly database: Database<PetstoreTables>;
  readonly storage: TestStorage;
  readonly clock: ManualClock;
  readonly contract: ContractChecker;
  /** A key with every scope, sent by `request` unless the headers carry `authorization` ('' sends none). */
  readonly adminKey: string;
  request<T = unknown>(
    method: string,
    url: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<Answer<T>>;
  /** Listens on a loopback port (for tests that need real connections). */
  listen(): Promise<string>;
  close(): Promise<void>;
}

const contracts = new Map<string, ContractChecker>();

/** Seals the test Petstores' webhook signing secrets. */
export const TEST_PETSTORE_SEALING_KEY = { id: 'test', key: Buffer.alloc(32, 7) };

/** Limits high enough that tests which do not test limits never meet them. */
export const TEST_LIMITS: PetstoreLimits = {
  ...DEFAULT_LIMITS,
  perKey: { quota: 1_000_000, windowSeconds: 60 },
  perAddress: { quota: 1_000_000, windowSeconds: 60 },
};

export async function startPetstore(
  dialect: Dialect,
  options: {
    clock?: ManualClock;
    limits?: PetstoreLimits;
    /** Start the webhook worker's loop with the app (default: tests drive it with runOnce). */
    webhookWorker?: boolean;
  } = {},
): Promise<TestPetstore> {
  const storage = await createTestStorage(dialect, { migrated: 'petstore' });
  const database = openDatabase<PetstoreTables>(storage.location);
  await migrateToLatest(database.db, database.dialect, 'petstore', petstoreMigrations);
  const clock = options.clock ?? new ManualClock('2026-11-22T12:00:00Z');
  const limits = options.limits ?? TEST_LIMITS;
  const app = buildPetstoreApp({
    database,
    clock: clock as Clock,
    deprecation: TEST_DEPRECATION,
    limits,
    // Loopback receivers are allowed; the worker runs only when a test asks.
    webhooks: {
      keys: [TEST_PETSTORE_SEALING_KEY],
      targets: 'private',
      timeoutMs: 2_000,
      start: options.webhookWorker ?? false,
    },
  });
  await app.ready();
  const admin = await ensureAdminKey(
    { database, db: database.db, dialect: database.dialect, clock },
    undefined,
  );
  if (!admin) throw new Error('a fresh Petstore database already had keys');
  const adminKey = admin.secret;
  const key = 'petstore';
  let contract = contracts.get(key);
  if (!contract) {
    contract = new ContractChecker(petstoreDocument(TEST_DEPRECATION));
    contracts.set(key, contract);
  }
  const checker = contract;
  return {
    app,
    database,
    storage,
    clock,
    contract: checker,
    adminKey,
    async request(method, url, body, given = {}) {
      const headers: Record<string, string> = { authorization: `Bearer ${adminKey}`, ...given };
      if (headers.authorization === '') delete headers.authorization;
      const hasBody = body !== undefined;
      const response = await app.inject({
        method: method as 'GET',
        url,
        headers:
          hasBody && typeof body !== 'string' ? { 'content-type': 'application/json', ...headers } : headers,
        ...(hasBody ? { payload: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
      });
      checker.check(
        method,
        url,
        response.statusCode,
        response.headers['content-type'] as string | undefined,
        response.body,
      );
      return {
        status: response.statusCode,
        headers: response.headers as Answer['headers'],
        text: response.body,
        body: (response.body === '' ? undefined : JSON.parse(response.body)) as never,
      };
    },
    async listen() {
      await app.listen({ port: 0, host: '127.0.0.1' });
      return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    },
    async close() {
      await app.close();
      await database.close();
      await storage.drop();
    },
  };
}

/**
 * A call over HTTP to a Petstore process at `base`, with API key `key` and a JSON body when one is
 * given: the status and the parsed body (undefined when empty).
 */
export async function callPetstore<T = Record<string, unknown>>(
  base: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** A pet's stock row: units in stock and units reserved by open orders. */
export async function stockOf(db: Database<PetstoreTables>['db'], petId: number) {
  const row = await db
    .selectFrom('inventory')
    .select(['quantity', 'reserved'])
    .where('pet_id', '=', petId)
    .executeTakeFirstOrThrow();
  return { quantity: row.quantity, reserved: row.reserved };
}

/**
 * POSTs `body` as JSON to the Petstore listening at `base`, over a real connection, with the admin
 * key and `headers`: the answer (checked against the document), its text and its headers.
 */
export async function postOverHttp(
  ps: TestPetstore,
  base: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ps.adminKey}`, ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  ps.contract.check('POST', path, response.status, response.headers.get('content-type') ?? undefined, text);
  return { status: response.status, text, headers: response.headers };
}

/** A pet `name` in a new category `category`, with `stock` units in stock when given: the pet's id. */
export async function seedPet(ps: TestPetstore, category: string, name: string, stock?: number) {
  const made = await ps.request<{ id: number }>('POST', '/categories', { name: category });
  const pet = await ps.request<{ id: number }>('POST', '/pets', { name, categoryId: made.body.id });
  if (stock !== undefined) await ps.request('PUT', `/store/inventory/${pet.body.id}`, { quantity: stock });
  return pet.body.id;
}
