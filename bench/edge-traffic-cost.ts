import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LifecycleRules } from '../src/edge/lifecycle.ts';
import {
  BUSY_REQUEST_LOG_FLUSH_MS,
  CallerIdentity,
  EdgeTraffic,
  TrafficRecorder,
} from '../src/edge/traffic/index.ts';
import { systemClock } from '../src/lib/clock.ts';
import { type TrafficWriter, trafficWriter } from '../src/platform/traffic/index.ts';
import { BENCH_DOCUMENT, ORIGIN_PATH } from './edge.ts';
import { openPlatform } from './support/platform.ts';
import type { Suite } from './support/report.ts';

/**
 * Issue 27: what traffic recording costs per request inside the edge's process, apart from the
 * proxying it rides on (the edge suite's recording pairs measure the whole; a busy machine blurs
 * them, this does not as much: it counts the process's CPU time, not the wall clock).
 *
 *   npm run bench -- traffic-cost              # the suite (only when named)
 *   node bench/edge-traffic-cost.ts            # the same figures, printed on one line
 *
 * REQUESTS=200000 ROUNDS=7 by default.
 *
 * Each round plays REQUESTS requests of the edge suite (`GET /api/pets/1` with an API key, the
 * suite's document) through what the edge does for recording: the operation match, the tag,
 * EdgeTraffic.finished (caller identity, the recorder), and the flushes a node at 10,000 req/s
 * makes into a real SQLite database: counts every 10 s (100,000 requests) and, the project being
 * busy (more than REQUEST_LOG_SIZE requests a second), its request log every
 * BUSY_REQUEST_LOG_FLUSH_MS (50,000 requests). Three parts, each the median of the rounds in CPU nanoseconds per request, less a loop
 * that makes the same request objects and ids without recording:
 *
 * - match: the operation match alone (LifecycleRules.find);
 * - record: tag + finished, the flushes' writes left out;
 * - total: match + record + the flushes into SQLite.
 *
 * The path matched is cut from each request's URL, a new string each time as the edge's
 * normalised path is (a constant string would keep its hash, which a cached match looks up).
 */
const REQUESTS = Number(process.env.REQUESTS ?? 200_000);
const ROUNDS = Number(process.env.ROUNDS ?? 7);
/** The node's rate the flushes are spaced for (requests per second). */
const RATE = 10_000;
const LOG_FLUSH_EVERY = (RATE * BUSY_REQUEST_LOG_FLUSH_MS) / 1000;
const COUNT_FLUSH_EVERY = RATE * 10;
const API_PATH = `/api${ORIGIN_PATH}`;
/** The request's path under /api, a new string per request. */
const pathOf = (req: IncomingMessage) => (req.url as string).slice(4);

/** CPU nanoseconds per request (medians of the rounds), and the loop they are measured against. */
export interface TrafficCost {
  readonly match: number;
  readonly record: number;
  readonly total: number;
  readonly loop: number;
}

export async function measureTrafficCost(): Promise<TrafficCost> {
  const work = mkdtempSync(join(tmpdir(), 'kennel-bench-traffic-cost-'));
  const platform = await openPlatform(
    join(work, 'cost.db'),
    `bench:${Buffer.alloc(32, 1).toString('base64')}`,
  );
  try {
    const rules = LifecycleRules.from(JSON.parse(BENCH_DOCUMENT) as Record<string, unknown>, new Date());
    const limits = { maxCallers: 10_000, maxOperations: 500, logSize: 1000 };
    const sqlite = trafficWriter(platform.ctx.db, 'cost');
    const none: TrafficWriter = { writeCounts: async () => {}, writeLogs: async () => {} };
    const socket = { remoteAddress: '127.0.0.1', bytesWritten: 0 };
    const res = { headersSent: true, statusCode: 200 } as ServerResponse;
    const newRequest = () =>
      ({
        url: API_PATH,
        method: 'GET',
        // A fresh header string per request, as the HTTP parser makes one.
        headers: { host: 'petstore.platform.test', 'x-api-key': `bench_live_${'0123456789abcdef'}` },
        socket,
      }) as unknown as IncomingMessage;

    const cpuNs = (since: NodeJS.CpuUsage) => {
      const used = process.cpuUsage(since);
      return (used.user + used.system) * 1000;
    };
    const loop = async (): Promise<number> => {
      const start = process.cpuUsage();
      let sink = 0;
      for (let i = 0; i < REQUESTS; i++) {
        const req = newRequest();
        sink += randomUUID().length + pathOf(req).length + performance.now();
        if (i % LOG_FLUSH_EVERY === LOG_FLUSH_EVERY - 1) await Promise.resolve();
      }
      return cpuNs(start) / REQUESTS + (sink < 0 ? 1 : 0);
    };
    const matchOnly = async (): Promise<number> => {
      const start = process.cpuUsage();
      let sink = 0;
      for (let i = 0; i < REQUESTS; i++) {
        const req = newRequest();
        sink += randomUUID().length + performance.now();
        sink += rules.find('GET', pathOf(req))?.operation.key.length ?? 0;
        if (i % LOG_FLUSH_EVERY === LOG_FLUSH_EVERY - 1) await Promise.resolve();
      }
      return cpuNs(start) / REQUESTS + (sink < 0 ? 1 : 0);
    };
    const recording = async (writer: typeof none): Promise<number> => {
      const recorder = new TrafficRecorder({ clock: systemClock, writer, limits });
      const edge = new EdgeTraffic(recorder, new CallerIdentity(Buffer.alloc(32, 7)), (error) => {
        throw error;
      });
      const start = process.cpuUsage();
      for (let i = 0; i < REQUESTS; i++) {
        const req = newRequest();
        const requestId = randomUUID();
        const startedAt = performance.now();
        const operation = rules.find('GET', pathOf(req));
        const tag = {
          projectId: 1,
          operation: operation?.operation.key ?? 'unmatched',
          path: `/api${ORIGIN_PATH}`,
          credentials: rules.credentials,
        };
        const end = { requestId, startedAt, socket, bytesBefore: socket.bytesWritten };
        socket.bytesWritten += 250;
        edge.finished(req, res, tag, end);
        if (i % LOG_FLUSH_EVERY === LOG_FLUSH_EVERY - 1) await recorder.flushLogs();
        if (i % COUNT_FLUSH_EVERY === COUNT_FLUSH_EVERY - 1) await recorder.flushCounts();
      }
      return cpuNs(start) / REQUESTS;
    };

    const figures = {
      loop: [] as number[],
      match: [] as number[],
      record: [] as number[],
      total: [] as number[],
    };
    for (let round = 0; round < ROUNDS; round++) {
      const base = await loop();
      figures.loop.push(base);
      figures.match.push((await matchOnly()) - base);
      figures.record.push((await recording(none)) - base);
      figures.total.push((await recording(sqlite)) - base);
    }
    const median = (values: number[]) =>
      [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
    const match = median(figures.match);
    return {
      match,
      record: median(figures.record) - match,
      total: median(figures.total),
      loop: median(figures.loop),
    };
  } finally {
    await platform.close();
    rmSync(work, { recursive: true, force: true });
  }
}

const describe = (cost: TrafficCost) =>
  `${REQUESTS} requests x ${ROUNDS} rounds, CPU ns per request (median): match ${cost.match.toFixed(0)}, ` +
  `record ${cost.record.toFixed(0)} (match + record ${(cost.match + cost.record).toFixed(0)}), ` +
  `total with the SQLite flushes ${cost.total.toFixed(0)}; the loop alone ${cost.loop.toFixed(0)}`;

/** `npm run bench -- traffic-cost`: the same figures as a table (no target: issue 27's is the edge suite's). */
export const trafficCostSuite: Suite = {
  name: 'traffic-cost',
  description:
    'traffic recording per request in process: CPU ns of match, recording, SQLite flushes (issue 27)',
  onlyWhenNamed: true,
  async run(_config, log) {
    log(`${REQUESTS} requests x ${ROUNDS} rounds (REQUESTS, ROUNDS)`);
    const cost = await measureTrafficCost();
    log(describe(cost));
    const ns = (value: number) => value.toFixed(0);
    return {
      suite: 'traffic-cost',
      title: `Traffic recording in process: CPU ns per request, medians of ${ROUNDS} rounds x ${REQUESTS} requests`,
      table: {
        headers: ['part', 'CPU ns / request'],
        rows: [
          ['operation match', ns(cost.match)],
          ['recording (tag, caller, recorder)', ns(cost.record)],
          ['match + recording + SQLite flushes', ns(cost.total)],
          ['the loop alone (subtracted)', ns(cost.loop)],
        ],
        right: [1],
      },
      checks: [],
      problems: [],
      warnings: [],
      data: { requests: REQUESTS, rounds: ROUNDS, ...cost },
    };
  },
};

if (import.meta.main) console.log(describe(await measureTrafficCost()));
