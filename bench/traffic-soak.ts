import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BENCH_DOCUMENT, BENCH_HOST, get, ORIGIN_PATH, startPetOrigin } from './edge.ts';
import type { BenchConfig } from './support/config.ts';
import { openPlatform, prepareEdgeDatabase } from './support/platform.ts';
import { formatRate, type Suite, type SuiteReport } from './support/report.ts';
import { freePort, START_FLAGS, startServer } from './support/servers.ts';
import { runWrk } from './support/wrk.ts';

/**
 * Issue 27's soak: 1 million requests through an edge recording traffic, from 100,000 distinct
 * callers (API keys), loopback only. Memory (RSS and heap after a full GC) is sampled between
 * chunks of load; it must stay flat, because the recorder's caps bound what it holds whatever the
 * number of callers. At the end the counts in the database must equal the requests the edge
 * answered: capped callers are counted as `other`, never dropped.
 */
export const trafficSoakSuite: Suite = {
  name: 'traffic-soak',
  onlyWhenNamed: true,
  description: 'the edge recording traffic over 1M requests from 100k callers: memory flat, counts exact',
  run: runTrafficSoak,
};

const ROOT = resolve(import.meta.dirname, '..');
const TOTAL = Number(process.env.SOAK_REQUESTS ?? 1_000_000);
const CALLERS = Number(process.env.SOAK_CALLERS ?? 100_000);
/** Seconds of load between two memory samples; the whole soak stops after SOAK_MAX_SECONDS. */
const CHUNK_SECONDS = 10;
const MAX_SECONDS = Number(process.env.SOAK_MAX_SECONDS ?? 600);
const MiB = 1024 * 1024;

interface Sample {
  readonly requests: number;
  readonly rssMiB: number;
  readonly heapMiB: number;
  readonly series: number;
  readonly callers: number;
}

async function runTrafficSoak(config: BenchConfig, log: (line: string) => void): Promise<SuiteReport> {
  const work = mkdtempSync(join(tmpdir(), 'kennel-bench-soak-'));
  const cleanups: (() => Promise<void>)[] = [];
  try {
    const problems: string[] = [];
    const { origin } = await startPetOrigin(config, work, config.serverCpu);
    cleanups.push(origin.stop);
    const edgeDb = await prepareEdgeDatabase({
      location: join(work, 'kennel.db'),
      originUrl: origin.url,
      document: BENCH_DOCUMENT,
    });
    const statsPort = await freePort();
    log(`starting the Kennel edge (bench/edge-node.ts) with traffic recording on`);
    const edge = await startServer({
      name: 'Kennel edge (traffic on)',
      node: config.node,
      // A full GC before each memory sample (the stats listener's /memory).
      args: [...START_FLAGS, '--expose-gc', join(ROOT, 'bench', 'edge-node.ts')],
      cwd: ROOT,
      cpu: config.serverCpu,
      port: await freePort(),
      env: {
        EDGE_DATABASE: edgeDb.location,
        EDGE_CERT_KEY: edgeDb.sealingKey,
        EDGE_TRAFFIC: 'on',
        HTTPS_PORT: String(await freePort()),
        STATS_PORT: String(statsPort),
      },
      readyPath: '/',
    });
    let stopped = false;
    cleanups.push(async () => {
      if (!stopped) await edge.stop();
    });
    const stats = `http://127.0.0.1:${statsPort}`;
    const sample = async (requests: number): Promise<Sample> => {
      const memory = JSON.parse((await get(stats, '/memory', 'stats')).body) as {
        rss: number;
        heapUsed: number;
      };
      const held = JSON.parse((await get(stats, '/traffic', 'stats')).body) as {
        series: number;
        callers: number;
      };
      return { requests, rssMiB: memory.rss / MiB, heapMiB: memory.heapUsed / MiB, ...held };
    };
    // Each request a caller of its own, cycling through CALLERS keys.
    const script = join(work, 'callers.lua');
    writeFileSync(
      script,
      [
        'local n = 0',
        'request = function()',
        '  n = n + 1',
        `  return wrk.format("GET", "/api${ORIGIN_PATH}", { ["Host"] = "${BENCH_HOST}", ["X-Api-Key"] = "soak_live_" .. (n % ${CALLERS}) })`,
        'end',
        '',
      ].join('\n'),
    );
    const samples: Sample[] = [await sample(0)];
    log(
      `sample at 0 requests: RSS ${samples[0]?.rssMiB.toFixed(1)} MiB, heap ${samples[0]?.heapMiB.toFixed(1)} MiB`,
    );
    let answered = 0;
    const started = performance.now();
    while (answered < TOTAL && performance.now() - started < MAX_SECONDS * 1000) {
      const result = await runWrk({
        url: `${edge.url}/api${ORIGIN_PATH}`,
        connections: config.connections,
        durationSeconds: CHUNK_SECONDS,
        cpu: config.loadCpu,
        script,
      });
      const errors = Object.values(result.socketErrors).reduce((a, b) => a + b, 0);
      if (result.non2xx > 0 || errors > 0)
        problems.push(`${result.non2xx} error answers, ${errors} socket errors`);
      answered += result.requests;
      const s = await sample(answered);
      samples.push(s);
      log(
        `${String(answered).padStart(9)} requests  ${formatRate(result.requestsPerSecond)} req/s  RSS ${s.rssMiB.toFixed(1)} MiB  heap ${s.heapMiB.toFixed(1)} MiB  held: ${s.series} series, ${s.callers} callers`,
      );
    }
    if (answered < TOTAL) problems.push(`only ${answered} requests within ${MAX_SECONDS} s`);
    // The node's stop flushes what it holds; then the database is read.
    await edge.stop();
    stopped = true;
    const platform = await openPlatform(edgeDb.location, edgeDb.sealingKey);
    let recorded: number;
    let callerRequests: number;
    let callerRows: number;
    try {
      const minutes = await platform.ctx.db
        .selectFrom('traffic_minutes')
        .select(({ fn }) => fn.sum<number>('requests').as('n'))
        .executeTakeFirstOrThrow();
      const callers = await platform.ctx.db
        .selectFrom('traffic_callers')
        .select(({ fn }) => [fn.sum<number>('requests').as('n'), fn.countAll<number>().as('rows')])
        .executeTakeFirstOrThrow();
      recorded = Number(minutes.n);
      callerRequests = Number(callers.n);
      callerRows = Number(callers.rows);
    } finally {
      await platform.close();
    }
    // wrk counts the answers it read; the edge also counts those in flight when a chunk ended.
    const chunks = samples.length - 1;
    const slack = config.connections * chunks;
    // Flat: after the first chunk (compiled code, pools and caps filled), the heap and RSS stay
    // within 16 MiB + 10 % of that first sample.
    const base = samples[1] as Sample;
    const last = samples[samples.length - 1] as Sample;
    const peakHeap = Math.max(...samples.slice(1).map((s) => s.heapMiB));
    const peakRss = Math.max(...samples.slice(1).map((s) => s.rssMiB));
    const flat = (first: number, peak: number) => peak <= first * 1.1 + 16;
    return {
      suite: 'traffic-soak',
      title: `Traffic soak: ${answered.toLocaleString('en')} requests from ${CALLERS.toLocaleString('en')} callers (X-Api-Key), edge on CPU ${config.serverCpu}, ${config.connections} connections, memory after a full GC every ${CHUNK_SECONDS} s`,
      table: {
        headers: ['requests', 'RSS MiB', 'heap MiB', 'series held', 'callers held'],
        rows: samples.map((s) => [
          s.requests.toLocaleString('en'),
          s.rssMiB.toFixed(1),
          s.heapMiB.toFixed(1),
          String(s.series),
          String(s.callers),
        ]),
        right: [0, 1, 2, 3, 4],
      },
      checks: [
        {
          label: `${TOTAL.toLocaleString('en')} requests answered`,
          passed: answered >= TOTAL,
          measured: answered.toLocaleString('en'),
        },
        {
          label: 'heap flat: peak within 10% + 16 MiB of the first chunk',
          passed: flat(base.heapMiB, peakHeap),
          measured: `${base.heapMiB.toFixed(1)} MiB after the first chunk, peak ${peakHeap.toFixed(1)}, last ${last.heapMiB.toFixed(1)}`,
        },
        {
          label: 'RSS flat: peak within 10% + 16 MiB of the first chunk',
          passed: flat(base.rssMiB, peakRss),
          measured: `${base.rssMiB.toFixed(1)} MiB after the first chunk, peak ${peakRss.toFixed(1)}, last ${last.rssMiB.toFixed(1)}`,
        },
        {
          label: 'every answered request counted (minutes and callers; capped callers as other)',
          passed: recorded === callerRequests && recorded >= answered && recorded - answered <= slack,
          measured: `${recorded.toLocaleString('en')} in minutes, ${callerRequests.toLocaleString('en')} in ${callerRows.toLocaleString('en')} caller rows, wrk read ${answered.toLocaleString('en')} (in flight at chunk ends: up to ${slack})`,
        },
      ],
      problems,
      warnings: [],
      data: { samples, answered, recorded, callerRequests, callerRows },
    };
  } finally {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((error: Error) => log(`cleanup failed: ${error.message}`));
    }
    rmSync(work, { recursive: true, force: true });
  }
}
