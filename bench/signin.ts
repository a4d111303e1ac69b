import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createUser } from '../src/platform/accounts/users.ts';
import { BENCH_HOST, get, ORIGIN_BODY, ORIGIN_PATH, startPetOrigin } from './edge.ts';
import type { BenchConfig } from './support/config.ts';
import { disturbanceNotes, measureRun, type RunFigures } from './support/measure.ts';
import { prepareEdgeDatabase } from './support/platform.ts';
import {
  type Check,
  formatMs,
  formatRate,
  formatRatio,
  median,
  type Suite,
  type SuiteReport,
} from './support/report.ts';
import { freePort, type RunningServer, START_FLAGS, startServer } from './support/servers.ts';

/**
 * Issue 13: password hashing must not starve the event loop. wrk sends a cheap request (a GET
 * proxied by the edge to the bare origin, both pinned to the server core) alone, then while 8
 * clients post sign-ins in a loop (each waits for its answer, then posts the next; pinned with
 * wrk to the load core). The share of the alone req/s kept during the flood, per round, median of
 * the rounds: target >= 80%. Attempt limits are lifted on this edge so every sign-in is checked.
 *
 * Two edges, one after the other: Kennel's hasher as configured by default, and the same hasher
 * with 4 threads at the event loop's priority, which is what libuv's threadpool (4 threads) did
 * before issue 13.
 */
export const signinSuite: Suite = {
  name: 'signin',
  description: 'a proxied GET through the edge alone and during a flood of 8 sign-in clients',
  run: runSigninSuite,
};

const ROOT = resolve(import.meta.dirname, '..');
const USER = { email: 'bench@platform.test', password: 'bench password 1' };
const PLATFORM_HOST = 'platform.test';
const CLIENTS = 8;
/** Time for the flood to fill the hashing threads and queue before wrk starts. */
const RAMP_MS = 1500;
const TARGET = 0.8;

interface Variant {
  readonly key: 'kennel' | 'threadpool';
  readonly label: string;
  readonly env: Readonly<Record<string, string>>;
}

const VARIANTS: readonly Variant[] = [
  { key: 'kennel', label: 'Kennel (default hasher)', env: {} },
  {
    key: 'threadpool',
    label: '4 hashing threads at the loop priority (as before)',
    env: { SIGN_IN_THREADS: '4', SIGN_IN_NICE: '0' },
  },
];

interface FloodSummary {
  readonly seconds: number;
  readonly statuses: Record<string, number>;
  readonly answered: number;
  readonly medianMs: number;
  readonly p99Ms: number;
}

interface Round {
  readonly round: number;
  readonly alone: RunFigures;
  readonly during: RunFigures;
  readonly flood: FloodSummary;
  readonly ratio: number;
}

interface VariantResult {
  readonly variant: Variant;
  readonly rounds: Round[];
}

async function runSigninSuite(config: BenchConfig, log: (line: string) => void): Promise<SuiteReport> {
  const work = mkdtempSync(join(tmpdir(), 'kennel-bench-signin-'));
  const cleanups: (() => Promise<void>)[] = [];
  const problems: string[] = [];
  const results: VariantResult[] = [];
  try {
    log('starting the origin (bench/bare-server.ts)');
    const { origin } = await startPetOrigin(config, work, config.serverCpu);
    cleanups.push(origin.stop);
    for (const variant of VARIANTS) {
      const edgeDb = await prepareEdgeDatabase({
        location: join(work, `kennel-${variant.key}.db`),
        originUrl: origin.url,
        seed: async (platform) => {
          await createUser(platform.ctx, USER);
        },
      });
      log(`starting the edge: ${variant.label}`);
      const edge = await startServer({
        name: `Kennel edge (${variant.label})`,
        node: config.node,
        args: [...START_FLAGS, join(ROOT, 'bench', 'edge-node.ts')],
        cwd: ROOT,
        cpu: config.serverCpu,
        port: await freePort(),
        env: {
          EDGE_DATABASE: edgeDb.location,
          EDGE_CERT_KEY: edgeDb.sealingKey,
          HTTPS_PORT: String(await freePort()),
          STATS_PORT: String(await freePort()),
          SIGN_IN_LIMITS: 'off',
          ...variant.env,
        },
        readyPath: '/',
      });
      try {
        results.push({ variant, rounds: await measureVariant(config, edge, origin, variant, problems, log) });
      } finally {
        await edge.stop();
      }
    }
    return summarize(config, results, problems);
  } finally {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((error: Error) => log(`cleanup failed: ${error.message}`));
    }
    rmSync(work, { recursive: true, force: true });
  }
}

async function measureVariant(
  config: BenchConfig,
  edge: RunningServer,
  origin: RunningServer,
  variant: Variant,
  problems: string[],
  log: (line: string) => void,
): Promise<Round[]> {
  const path = `/api${ORIGIN_PATH}`;
  const answer = await get(edge.url, path, BENCH_HOST);
  if (answer.status !== 200 || answer.body !== ORIGIN_BODY) {
    throw new Error(`the edge answered ${answer.status} for ${path}, not the origin's answer`);
  }
  const probe = await startFlood(config, edge, 1);
  await sleep(500);
  const signedIn = await probe.stop();
  if (!(signedIn.statuses['201'] ?? 0)) {
    throw new Error(`signing in through the edge failed: ${JSON.stringify(signedIn.statuses)}`);
  }
  const measure = (seconds: number, companions: number[]) =>
    measureRun(config, {
      server: edge,
      path,
      seconds,
      headers: { Host: BENCH_HOST },
      companionPids: [origin.pid, ...companions],
    });
  // The edge reaches its compiled speed after a few seconds under load (see bench/edge.ts).
  const warmup = Math.max(config.warmupSeconds, 8);
  log(`  warm-up: ${warmup} s`);
  await measure(warmup, []);
  const rounds: Round[] = [];
  for (let round = 1; round <= config.rounds; round++) {
    const alone = await measure(config.durationSeconds, []);
    const flood = await startFlood(config, edge, CLIENTS);
    await sleep(RAMP_MS);
    const during = await measure(config.durationSeconds, [flood.pid]);
    const summary = await flood.stop();
    const ratio = during.requestsPerSecond / alone.requestsPerSecond;
    rounds.push({ round, alone, during, flood: summary, ratio });
    for (const [what, m] of [
      ['alone', alone],
      ['during the flood', during],
    ] as const) {
      if (m.problem) problems.push(`${variant.label}, round ${round}, ${what}: ${m.problem}`);
    }
    const refused = Object.entries(summary.statuses).filter(([status]) => status !== '201');
    if (!(summary.statuses['201'] ?? 0)) {
      problems.push(
        `${variant.label}, round ${round}: no sign-in succeeded (${JSON.stringify(summary.statuses)})`,
      );
    }
    log(
      `  round ${round}/${config.rounds}  alone ${formatRate(alone.requestsPerSecond)} req/s, during ${formatRate(during.requestsPerSecond)} req/s (${formatRatio(ratio)}); ` +
        `sign-ins ${(summary.answered / summary.seconds).toFixed(1)}/s, median ${formatMs(summary.medianMs)}` +
        (refused.length > 0 ? `, other answers ${JSON.stringify(Object.fromEntries(refused))}` : ''),
    );
  }
  return rounds;
}

/** Starts bench/signin-flood.ts on the load CPU; `stop()` ends it and returns its summary. */
async function startFlood(
  config: BenchConfig,
  edge: RunningServer,
  clients: number,
): Promise<{ pid: number; stop(): Promise<FloodSummary> }> {
  const child = spawn(
    'taskset',
    ['-c', config.loadCpu, config.node, join(ROOT, 'bench', 'signin-flood.ts')],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        TARGET: edge.url,
        HOST: PLATFORM_HOST,
        EMAIL: USER.email,
        PASSWORD: USER.password,
        CLIENTS: String(clients),
        MAX_SECONDS: String(config.durationSeconds * 4 + 60),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-2000);
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return {
    pid: child.pid ?? -1,
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      try {
        return JSON.parse(stdout) as FloodSummary;
      } catch {
        throw new Error(`the sign-in flood exited with ${code}: ${stderr.trim() || stdout.trim()}`);
      }
    },
  };
}

function summarize(config: BenchConfig, results: readonly VariantResult[], problems: string[]): SuiteReport {
  const figures = results.map(({ variant, rounds }) => {
    const ratios = rounds.map((r) => r.ratio);
    const answered = rounds.reduce((sum, r) => sum + r.flood.answered, 0);
    const seconds = rounds.reduce((sum, r) => sum + r.flood.seconds, 0);
    const statuses: Record<string, number> = {};
    for (const r of rounds)
      for (const [status, n] of Object.entries(r.flood.statuses))
        statuses[status] = (statuses[status] ?? 0) + n;
    return {
      variant,
      alone: median(rounds.map((r) => r.alone.requestsPerSecond)),
      during: median(rounds.map((r) => r.during.requestsPerSecond)),
      ratio: median(ratios),
      lowest: Math.min(...ratios),
      highest: Math.max(...ratios),
      signInsPerSecond: answered / seconds,
      signInMedianMs: median(rounds.map((r) => r.flood.medianMs)),
      signInP99Ms: median(rounds.map((r) => r.flood.p99Ms)),
      statuses,
    };
  });
  const kennel = figures.find((f) => f.variant.key === 'kennel');
  const checks: Check[] = kennel
    ? [
        {
          label: `issue 13: proxied GET during a flood of ${CLIENTS} sign-in clients >= ${TARGET * 100}% of alone (median of the rounds' ratios)`,
          passed: kennel.ratio >= TARGET,
          measured: `${formatRatio(kennel.ratio)} (${formatRate(kennel.during)} vs ${formatRate(kennel.alone)} req/s; rounds ${formatRatio(kennel.lowest)}–${formatRatio(kennel.highest)}), ${kennel.signInsPerSecond.toFixed(1)} sign-ins/s`,
        },
      ]
    : [];
  const warnings = results.flatMap(({ variant, rounds }) =>
    rounds.flatMap((r) => [
      ...disturbanceNotes(config, `${variant.label}, round ${r.round}, alone`, r.alone),
      ...disturbanceNotes(config, `${variant.label}, round ${r.round}, during the flood`, r.during),
    ]),
  );
  return {
    suite: 'signin',
    title: `Sign-in flood: GET /api${ORIGIN_PATH} through the edge (edge and origin on CPU ${config.serverCpu}) alone, then with ${CLIENTS} clients signing in (CPU ${config.loadCpu}); ${config.connections} connections, medians of ${config.rounds} rounds x ${config.durationSeconds} s`,
    table: {
      headers: [
        'Edge',
        'alone req/s',
        'during req/s',
        'kept',
        'rounds kept',
        'sign-ins/s',
        'sign-in median',
        'sign-in p99',
        'answers',
      ],
      rows: figures.map((f) => [
        f.variant.label,
        formatRate(f.alone),
        formatRate(f.during),
        formatRatio(f.ratio),
        `${formatRatio(f.lowest)}–${formatRatio(f.highest)}`,
        f.signInsPerSecond.toFixed(1),
        formatMs(f.signInMedianMs),
        formatMs(f.signInP99Ms),
        Object.entries(f.statuses)
          .map(([status, n]) => `${status}: ${n}`)
          .join(', '),
      ]),
      right: [1, 2, 3, 5, 6, 7],
    },
    checks,
    problems,
    warnings,
    data: { results },
  };
}
