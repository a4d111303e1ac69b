import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { systemClock } from '../src/lib/clock.ts';
import { generateSigningSecret, newMessageId, signWebhook } from '../src/lib/webhooks/index.ts';
import { emitEvents } from '../src/petstore/events/emit-event.ts';
import { petstoreWebhookWorker } from '../src/petstore/events/start-webhook-worker.ts';
import { createSubscription } from '../src/petstore/events/subscriptions.ts';
import { type PetstoreTables, petstoreMigrations } from '../src/petstore/index.ts';
import type { StoreContext } from '../src/petstore/store/context.ts';
import {
  type Database,
  migrateToLatest,
  openDatabase,
  type StorageLocation,
  transact,
} from '../src/storage/index.ts';
import type { BenchConfig } from './support/config.ts';
import { createBenchDatabase } from './support/postgres.ts';
import { formatRate, formatRatio, median, type Suite, type SuiteReport } from './support/report.ts';

/**
 * Webhook throughput: events delivered per second from the Petstore's outbox to a local
 * receiver, by the worker the Petstore runs (claim with a lease, sign, POST, record the attempt),
 * against a baseline in the same run — the receiver hammered directly with the same signed POSTs
 * by a plain undici loop at the same concurrency, with no database. The gap is what the outbox's
 * durability costs per event.
 */

const EVENTS = 3_000;
const CONCURRENCY = 8;
const KEY = { id: 'bench', key: Buffer.alloc(32, 5) };

/** A receiver that counts and answers 204, as cheap as a receiver can be. */
async function startReceiver(): Promise<{ url: string; count: () => number; reset(): void; server: Server }> {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    count: () => received,
    reset: () => {
      received = 0;
    },
    server,
  };
}

const body = (i: number) =>
  JSON.stringify({
    type: 'pet.created',
    timestamp: new Date().toISOString(),
    data: { id: i + 1, name: `Pet ${i + 1}`, categoryId: 1, status: 'available' },
  });

/** The baseline: the same signed POSTs, straight from a loop. */
async function directRate(url: string, secret: string): Promise<number> {
  const agent = new Agent({ keepAliveTimeout: 10_000 });
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < EVENTS; i = next++) {
        const payload = body(i);
        const response = await request(url, {
          method: 'POST',
          dispatcher: agent,
          headers: {
            'content-type': 'application/json',
            ...signWebhook(secret, newMessageId(), new Date(), payload),
          },
          body: payload,
        });
        await response.body.dump();
        if (response.statusCode !== 204) throw new Error(`receiver answered ${response.statusCode}`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await agent.close();
  return EVENTS / seconds;
}

/** The outbox: EVENTS committed (not timed), then the worker delivers them all (timed). */
async function outboxRate(database: Database<PetstoreTables>): Promise<number> {
  const ctx: StoreContext = { database, db: database.db, dialect: database.dialect, clock: systemClock };
  for (let start = 0; start < EVENTS; start += 500) {
    await transact(database.db, (trx) =>
      emitEvents(
        ctx,
        trx,
        Array.from({ length: Math.min(500, EVENTS - start) }, (_, k) => ({
          type: 'pet.created' as const,
          subject: `pet:${start + k + 1}`,
          data: JSON.parse(body(start + k)).data,
        })),
      ),
    );
  }
  const worker = petstoreWebhookWorker(database.db, systemClock, {
    keys: [KEY],
    targets: 'private',
    timeoutMs: 10_000,
    concurrency: CONCURRENCY,
    onError: (error) => {
      throw error;
    },
  });
  const started = performance.now();
  let delivered = 0;
  while (delivered < EVENTS) {
    const attempted = await worker.runOnce();
    if (attempted === 0) throw new Error(`only ${delivered} of ${EVENTS} events were due`);
    delivered += attempted;
  }
  const seconds = (performance.now() - started) / 1000;
  await worker.stop();
  return EVENTS / seconds;
}

async function withDatabase<T>(
  location: StorageLocation,
  work: (db: Database<PetstoreTables>) => Promise<T>,
) {
  const database = openDatabase<PetstoreTables>(location);
  try {
    await migrateToLatest(database.db, database.dialect, 'petstore', petstoreMigrations);
    return await work(database);
  } finally {
    await database.close();
  }
}

export const webhooksSuite: Suite = {
  name: 'webhooks',
  description: 'webhook events delivered per second from the outbox to a local receiver',
  async run(config: BenchConfig, log): Promise<SuiteReport> {
    const receiver = await startReceiver();
    const problems: string[] = [];
    const rounds = Math.max(1, config.rounds);
    const dialects: {
      name: string;
      location: () => Promise<{ location: StorageLocation; drop(): Promise<void> }>;
    }[] = [
      {
        name: 'SQLite',
        location: async () => {
          const dir = mkdtempSync(join(tmpdir(), 'kennel-bench-webhooks-'));
          return {
            location: { kind: 'sqlite', file: join(dir, 'petstore.db') },
            drop: async () => rmSync(dir, { recursive: true, force: true }),
          };
        },
      },
    ];
    if (config.postgresUrl) {
      const adminUrl = config.postgresUrl;
      dialects.push({
        name: 'PostgreSQL',
        location: async () => {
          const db = await createBenchDatabase(adminUrl, 'bench_webhooks');
          return { location: { kind: 'postgres', url: db.url }, drop: () => db.drop() };
        },
      });
    }
    const secret = generateSigningSecret();
    const direct: number[] = [];
    const outbox = new Map<string, number[]>(dialects.map((d) => [d.name, []]));
    for (let round = 1; round <= rounds; round++) {
      receiver.reset();
      direct.push(await directRate(receiver.url, secret));
      if (receiver.count() !== EVENTS)
        problems.push(`direct: the receiver got ${receiver.count()} of ${EVENTS}`);
      log(`round ${round}: direct ${formatRate(direct.at(-1) as number)} events/s`);
      for (const dialect of dialects) {
        const place = await dialect.location();
        try {
          const rate = await withDatabase(place.location, async (database) => {
            await createSubscription(
              database.db,
              { keys: [KEY], targets: 'private' },
              {
                url: receiver.url,
                eventTypes: ['*'],
              },
              new Date(),
            );
            receiver.reset();
            return outboxRate(database);
          });
          if (receiver.count() !== EVENTS) {
            problems.push(`${dialect.name}: the receiver got ${receiver.count()} of ${EVENTS}`);
          }
          outbox.get(dialect.name)?.push(rate);
          log(`round ${round}: outbox on ${dialect.name} ${formatRate(rate)} events/s`);
        } finally {
          await place.drop();
        }
      }
    }
    await new Promise<void>((done) => receiver.server.close(() => done()));
    const baseline = median(direct);
    const rows = [
      ['direct signed POSTs (baseline, no database)', formatRate(baseline), '100.0%'],
      ...dialects.map((d) => {
        const rate = median(outbox.get(d.name) ?? []);
        return [`outbox worker, ${d.name}`, formatRate(rate), formatRatio(rate / baseline)];
      }),
    ];
    return {
      suite: 'webhooks',
      title: `Webhook throughput: ${EVENTS} events, ${CONCURRENCY} in flight, median of ${rounds} round(s)`,
      table: { headers: ['delivery', 'events/s', 'of baseline'], rows, right: [1, 2] },
      checks: [
        {
          label: 'every event delivered exactly once',
          passed: problems.length === 0,
          measured: problems.length === 0 ? `${EVENTS} per run` : problems.join('; '),
        },
      ],
      problems,
      warnings: [],
      data: { events: EVENTS, concurrency: CONCURRENCY, direct, outbox: Object.fromEntries(outbox) },
    };
  },
};
