import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { ManualClock } from '../../src/lib/clock.ts';
import {
  buildPetstoreApp,
  DEFAULT_LIMITS,
  type PetstoreTables,
  petstoreMigrations,
} from '../../src/petstore/index.ts';
import { type Database, migrateToLatest, openDatabase } from '../../src/storage/index.ts';
import { createTestStorage, type TestStorage, testDialects } from '../support/databases.ts';
import { TEST_DEPRECATION } from '../support/petstore.ts';

/**
 * A TCP relay in front of PostgreSQL that the test can cut: `down` closes every relayed
 * connection and refuses new ones (a server gone), `hung` accepts connections and never answers
 * (a network that drops packets), `up` relays again.
 */
class Relay {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  mode: 'up' | 'down' | 'hung' = 'up';

  constructor(target: { host: string; port: number }) {
    this.#server = createServer((client) => {
      this.#sockets.add(client);
      client.on('close', () => this.#sockets.delete(client));
      client.on('error', () => {});
      if (this.mode === 'down') return void client.destroy();
      if (this.mode === 'hung') return;
      const upstream = connect(target);
      this.#sockets.add(upstream);
      upstream.on('close', () => this.#sockets.delete(upstream));
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.pipe(upstream).pipe(client);
    });
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    return (this.#server.address() as { port: number }).port;
  }

  set(mode: 'up' | 'down' | 'hung'): void {
    this.mode = mode;
    if (mode !== 'up') for (const socket of this.#sockets) socket.destroy();
  }

  close(): Promise<void> {
    this.set('down');
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

/**
 * The cluster rate-limit policy when its database goes away (the decision in docs/decisions/petstore-access.md:
 * fail open, counted locally). The Petstore stays up; operations that need no database still
 * answer, with the RateLimit fields, counted by the process alone (the quota, then 429); those
 * that need it answer 503. A database that does not answer at all costs a request the claim's
 * 2 s, not the pool's 5 s. When the database is back, the shared count applies again.
 */
describe('cluster rate limits while PostgreSQL is unreachable (postgres)', {
  skip: !testDialects().includes('postgres') && 'TEST_DATABASE excludes postgres',
}, () => {
  let storage: TestStorage;
  let relay: Relay;
  let database: Database<PetstoreTables>;
  let app: FastifyInstance;
  const clock = new ManualClock('2026-11-22T12:00:00Z');
  const warnings: string[] = [];

  before(async () => {
    storage = await createTestStorage('postgres');
    assert.ok(storage.location.kind === 'postgres');
    const target = new URL(storage.location.url);
    relay = new Relay({ host: target.hostname, port: Number(target.port || 5432) });
    const port = await relay.listen();
    target.host = `127.0.0.1:${port}`;
    database = openDatabase<PetstoreTables>({ ...storage.location, url: target.toString() });
    await migrateToLatest(database.db, database.dialect, 'petstore', petstoreMigrations);
    app = buildPetstoreApp({
      database,
      clock,
      deprecation: TEST_DEPRECATION,
      logger: false,
      limits: { ...DEFAULT_LIMITS, perAddress: { quota: 3, windowSeconds: 60 } },
    });
    app.log.warn = ((details: { policy?: string }, message?: string) => {
      warnings.push(`${details.policy}: ${message}`);
    }) as typeof app.log.warn;
    await app.ready();
  });
  after(async () => {
    await app?.close();
    await relay?.close();
    await database?.close();
    await storage?.drop();
  });

  const openapi = () => app.inject({ method: 'GET', url: '/openapi.json' });

  it('counts on the shared count while PostgreSQL answers', async () => {
    for (const r of [2, 1]) {
      const answer = await openapi();
      assert.equal(answer.statusCode, 200);
      assert.equal(answer.headers.ratelimit, `"address";r=${r};t=60`);
    }
  });

  it('refused connections: the process counts alone, stays up and limited; data answers 503', async () => {
    relay.set('down');
    // The local count starts at 0: during an outage each node allows the quota (the stated
    // tolerance, N × quota for N nodes).
    for (const r of [2, 1, 0]) {
      const answer = await openapi();
      assert.equal(answer.statusCode, 200);
      assert.equal(answer.headers.ratelimit, `"address";r=${r};t=60`);
    }
    const refused = await openapi();
    assert.equal(refused.statusCode, 429);
    assert.equal(refused.headers['retry-after'], '60');
    assert.equal(JSON.parse(refused.body).code, 'rate_limited');
    assert.deepEqual(warnings, [
      'address: the shared rate-limit count is unreachable: this process counts address limits alone for 5 s',
    ]);
    // Operations that need the database say so, as before (not a crash, not a hang).
    const pets = await app.inject({ method: 'GET', url: '/pets', remoteAddress: '10.0.0.9' });
    assert.equal(pets.statusCode, 503);
    assert.equal(JSON.parse(pets.body).code, 'database_unavailable');
  });

  it('when PostgreSQL is back, the shared count applies again', async () => {
    relay.set('up');
    clock.advance(5_000);
    // The shared count holds 2 of 3 from before the outage: one more, then 429.
    const last = await openapi();
    assert.equal(last.statusCode, 200);
    assert.equal(last.headers.ratelimit, '"address";r=0;t=55');
    assert.equal((await openapi()).statusCode, 429);
  });

  it('a database that never answers: decided locally after about 2 s', async () => {
    relay.set('hung');
    clock.advance(60_000);
    const started = performance.now();
    const answer = await app.inject({ method: 'GET', url: '/openapi.json', remoteAddress: '10.0.0.7' });
    const took = performance.now() - started;
    assert.equal(answer.statusCode, 200);
    assert.equal(answer.headers.ratelimit, '"address";r=2;t=55');
    assert.ok(took >= 1_900 && took < 5_000, `took ${Math.round(took)} ms`);
    // A second outage, told again (the purge of old windows at the window change may fail too).
    assert.equal(warnings.filter((w) => /unreachable/.test(w)).length, 2, warnings.join('\n'));
  });
});
