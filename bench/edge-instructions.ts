import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ONE_HELPER_THREAD } from '../src/main/helper-threads.ts';
import {
  BENCH_DOCUMENT,
  BENCH_HEADERS,
  BENCH_HOST,
  get,
  ORIGIN_BODY,
  ORIGIN_PATH,
  startPetOrigin,
} from './edge.ts';
import { h2load } from './edge-http2.ts';
import { countedInstructions } from './support/callgrind.ts';
import type { BenchConfig } from './support/config.ts';
import { prepareEdgeDatabase } from './support/platform.ts';
import {
  type Check,
  formatRate,
  formatRatio,
  median,
  type Suite,
  type SuiteReport,
} from './support/report.ts';
import { freePort, type RunningServer, startServer } from './support/servers.ts';
import { runWrk } from './support/wrk.ts';

/**
 * Issue 5, the proxy's cost without the machine's noise: user-space instructions per proxied
 * request, counted by valgrind's callgrind, for the bare origin answering directly, the Kennel
 * edge and the plain Node.js proxy (bench/plain-proxy.ts); and issue 27's cost of traffic recording:
 * the edge with recording off and on, both serving the edge suite's document to requests with an
 * API key (target: on takes at most 2.5% more); and issue 29's edge over TLS, HTTP/1.1 and h2,
 * loaded by h2load (its TLS included in the count). On a shared VM the `edge` suite's
 * req/s moves by ±15% from minute to minute; an instruction count is the same within a few
 * percent from run to run, so it shows what a change to the edge's code costs or saves.
 * It leaves out what the kernel does for the process (the socket calls), which `edge` measures.
 *
 * Each server runs under callgrind with counting off; wrk warms it up (the JIT compiles the hot
 * path), then counts in windows: counters zeroed, counting on for one wrk run, the count divided
 * by the requests wrk counted. Under callgrind a process runs about fifty times slower, so a
 * window is a fraction of a second of native load, and whether a major collection or a
 * compilation lands in it moves its count by up to 40%: the figure is the median of WINDOWS
 * windows, their range printed beside it. The origin, not counted, runs beside wrk on the load
 * core.
 */
export const edgeInstructionsSuite: Suite = {
  name: 'edge-instructions',
  description: 'instructions per request (callgrind): the bare origin, the edge and the plain Node proxy',
  run: runEdgeInstructionsSuite,
};

const ROOT = resolve(import.meta.dirname, '..');
/** Concurrency under valgrind, which runs every thread of the process on one host thread. */
const CONNECTIONS = 10;
const WARMUP_SECONDS = Number(process.env.BENCH_INSTR_WARMUP ?? 30);
const MEASURE_SECONDS = Number(process.env.BENCH_INSTR_SECONDS ?? 15);
const WINDOWS = Number(process.env.BENCH_INSTR_WINDOWS ?? 5);
/** h2 connections for the h2 count: CONNECTIONS streams in flight over them (2 x 5). */
const H2_CONNECTIONS = 2;
/**
 * The TLS counts go by requests, not seconds: on a busy machine a callgrind'd edge answers a few
 * hundred a second or a few dozen, and a warm-up must have compiled the hot path either way.
 */
const TLS_WARMUP_REQUESTS = Number(process.env.BENCH_INSTR_TLS_WARMUP_REQUESTS ?? 20_000);
const TLS_WINDOW_REQUESTS = Number(process.env.BENCH_INSTR_TLS_REQUESTS ?? 3_000);
/**
 * Which targets to count, by label in lowercase with dashes (`origin-directly`, `kennel-edge`,
 * `kennel-edge-http-1-1-tls`, `kennel-edge-h2`, `kennel-traffic-off`, `kennel-traffic-on`,
 * `plain-node-proxy`), comma-separated; all by default.
 */
const TARGETS = process.env.BENCH_INSTR_TARGETS?.split(',').map((key) => key.trim());
const targetKey = (label: string) => label.toLowerCase().replace(/\W+/g, '-');
/** Issue 27: what recording may add to the edge's instructions per request. */
const RECORDING_BUDGET = 0.025;

interface Counted {
  readonly label: string;
  /** Requests counted in all windows. */
  readonly requests: number;
  /** Instructions per request of each window. */
  readonly perWindow: readonly number[];
}

function requireValgrind(): void {
  for (const command of ['valgrind', 'callgrind_control']) {
    const found = spawnSync(command, ['--version'], { encoding: 'utf8' });
    if (found.error) {
      throw new Error(
        `the edge-instructions suite needs ${command}. Install it with: apt-get install -y valgrind`,
      );
    }
  }
}

async function runEdgeInstructionsSuite(
  config: BenchConfig,
  log: (line: string) => void,
): Promise<SuiteReport> {
  requireValgrind();
  const work = mkdtempSync(join(tmpdir(), 'kennel-bench-instructions-'));
  const cleanups: (() => Promise<void>)[] = [];
  const counted: Counted[] = [];
  const problems: string[] = [];
  try {
    const { origin, responsesFile } = await startPetOrigin(config, work, config.loadCpu);
    cleanups.push(origin.stop);
    const edgeDb = await prepareEdgeDatabase({ location: join(work, 'kennel.db'), originUrl: origin.url });
    // Issue 27: the edge recording traffic, against the same edge not recording, both serving the
    // edge suite's document (its path is an operation, callers send an API key) to the same requests.
    const trafficDbs = {
      off: await prepareEdgeDatabase({
        location: join(work, 'kennel-traffic-off.db'),
        originUrl: origin.url,
        document: BENCH_DOCUMENT,
      }),
      on: await prepareEdgeDatabase({
        location: join(work, 'kennel-traffic-on.db'),
        originUrl: origin.url,
        document: BENCH_DOCUMENT,
      }),
    };
    const kennelTraffic = async (traffic: 'on' | 'off') => ({
      label: `Kennel, traffic ${traffic}`,
      script: join(ROOT, 'bench', 'edge-node.ts'),
      path: `/api${ORIGIN_PATH}`,
      headers: BENCH_HEADERS,
      env: {
        EDGE_DATABASE: trafficDbs[traffic].location,
        EDGE_CERT_KEY: trafficDbs[traffic].sealingKey,
        EDGE_TRAFFIC: traffic,
        // Under callgrind the edge serves about 1/40 of its rate, while the request log is written
        // by the clock (every second; a busy project's every 5 s): 1/40 of the log's size keeps
        // its rows per request what they are at full speed (1,000 rows per 5 s at ~19,000 req/s).
        REQUEST_LOG_SIZE: '25',
        HTTPS_PORT: String(await freePort()),
        STATS_PORT: String(await freePort()),
      },
    });
    const kennelTls = async (name: string, protocol: TlsLoad['protocol']) => {
      const httpsPort = await freePort();
      return {
        label: `Kennel edge, ${name}`,
        script: join(ROOT, 'bench', 'edge-node.ts'),
        path: `/api${ORIGIN_PATH}`,
        env: {
          EDGE_DATABASE: edgeDb.location,
          EDGE_CERT_KEY: edgeDb.sealingKey,
          HTTPS_PORT: String(httpsPort),
          STATS_PORT: String(await freePort()),
        },
        tls: {
          protocol,
          httpsPort,
          logFile: join(work, `h2load-${protocol}.log`),
          requests: TLS_WINDOW_REQUESTS,
        },
      };
    };

    const targets: {
      label: string;
      script: string;
      path: string;
      env: Record<string, string>;
      headers?: Record<string, string>;
      /** Loaded over TLS with h2load at `httpsPort` instead of wrk over plain HTTP. */
      tls?: TlsLoad;
    }[] = [
      {
        label: 'origin directly',
        script: join(ROOT, 'bench', 'bare-server.ts'),
        path: ORIGIN_PATH,
        env: { BARE_RESPONSES: responsesFile },
      },
      {
        label: 'Kennel edge',
        script: join(ROOT, 'bench', 'edge-node.ts'),
        path: `/api${ORIGIN_PATH}`,
        env: {
          EDGE_DATABASE: edgeDb.location,
          EDGE_CERT_KEY: edgeDb.sealingKey,
          HTTPS_PORT: String(await freePort()),
          STATS_PORT: String(await freePort()),
        },
      },
      // Issue 29: the same edge over TLS, HTTP/1.1 and h2 (h2load), for the cost of each protocol.
      await kennelTls('HTTP/1.1 TLS', 'h1'),
      await kennelTls('h2', 'h2'),
      await kennelTraffic('off'),
      await kennelTraffic('on'),
      {
        label: 'plain Node proxy',
        script: join(ROOT, 'bench', 'plain-proxy.ts'),
        path: `/api${ORIGIN_PATH}`,
        env: { ORIGIN_URL: origin.url },
      },
    ];
    for (const target of targets) {
      if (TARGETS !== undefined && !TARGETS.includes(targetKey(target.label))) continue;
      log(`${target.label}: starting under callgrind (counting off)`);
      // Figures are read live (callgrind_control -e); the file is what callgrind writes at exit.
      const outFile = join(work, `${target.label.replace(/\W+/g, '-')}.callgrind`);
      const server = await startServer({
        name: target.label,
        node: 'valgrind',
        args: [
          '--tool=callgrind',
          '--instr-atstart=no',
          `--callgrind-out-file=${outFile}`,
          config.node,
          // Named here, the one-core pool keeps the edge node from restarting itself with it
          // (src/main/helper-threads.ts): valgrind would not follow the execve.
          ONE_HELPER_THREAD,
          target.script,
        ],
        cwd: ROOT,
        cpu: config.serverCpu,
        port: await freePort(),
        env: target.env,
        readyPath: target.path,
        readyTimeoutMs: 180_000,
      });
      try {
        const answer = await firstAnswer(server, target.path);
        if (answer.status !== 200 || answer.body !== ORIGIN_BODY) {
          throw new Error(`${target.label} answered ${answer.status}, not the origin's answer`);
        }
        log(`${target.label}: warm-up ${WARMUP_SECONDS} s`);
        await load(
          config,
          server,
          target.path,
          WARMUP_SECONDS,
          target.headers,
          target.tls && { ...target.tls, requests: TLS_WARMUP_REQUESTS },
        );
        const pid = String(server.pid);
        const perWindow: number[] = [];
        let requests = 0;
        for (let window = 1; window <= WINDOWS; window++) {
          await callgrindControl(['--zero', pid]);
          await callgrindControl(['-i', 'on', pid]);
          const run = await load(config, server, target.path, MEASURE_SECONDS, target.headers, target.tls);
          // Read while counting is on: callgrind shows no counters once it is off.
          const instructions = countedInstructions(await callgrindControl(['-e', 'Ir', pid]));
          await callgrindControl(['-i', 'off', pid]);
          if (run.problem) problems.push(`${target.label}, window ${window}: ${run.problem}`);
          if (instructions === 0)
            problems.push(`${target.label}, window ${window}: callgrind counted nothing`);
          requests += run.requests;
          perWindow.push(instructions / run.requests);
          log(
            `${target.label}: window ${window}, ${run.requests} requests, ${formatRate(instructions / run.requests)} instructions per request`,
          );
        }
        if (requests < 1_000) {
          problems.push(
            `${target.label}: ${requests} requests counted, too few to divide by; raise BENCH_INSTR_SECONDS`,
          );
        }
        counted.push({ label: target.label, requests, perWindow });
      } finally {
        await server.stop();
      }
    }
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
    rmSync(work, { recursive: true, force: true });
  }
  return summarize(counted, problems);
}

/** h2load over TLS: HTTP/1.1 (CONNECTIONS connections) or h2 (H2_CONNECTIONS x the rest as streams). */
interface TlsLoad {
  readonly protocol: 'h1' | 'h2';
  readonly httpsPort: number;
  readonly logFile: string;
  /** Requests per run (h2load -n). */
  readonly requests: number;
}

async function load(
  config: BenchConfig,
  server: RunningServer,
  path: string,
  seconds: number,
  headers: Record<string, string> = { Host: BENCH_HOST },
  tls?: TlsLoad,
): Promise<{ requests: number; problem: string | null }> {
  if (tls) {
    // CONNECTIONS requests in flight either way: HTTP/1.1 one per connection, h2 as streams.
    const h1 = tls.protocol === 'h1';
    const run = await h2load({
      port: tls.httpsPort,
      connections: h1 ? CONNECTIONS : H2_CONNECTIONS,
      streams: h1 ? 1 : CONNECTIONS / H2_CONNECTIONS,
      h1,
      seconds,
      requests: tls.requests,
      cpu: config.loadCpu,
      logFile: tls.logFile,
      // Counted from its first request, as the window's instructions are (its few TLS handshakes
      // among them, a small share of a window's).
      warmUpSeconds: 0,
    });
    return { requests: run.succeeded, problem: run.problem };
  }
  const result = await runWrk({
    url: `${server.url}${path}`,
    connections: CONNECTIONS,
    durationSeconds: seconds,
    cpu: config.loadCpu,
    headers,
  });
  const errors = Object.values(result.socketErrors).reduce((a, b) => a + b, 0);
  return {
    requests: result.requests,
    problem:
      result.non2xx > 0 || errors > 0 ? `${result.non2xx} error answers, ${errors} socket errors` : null,
  };
}

/**
 * The first proxied answer, asked up to five times: under callgrind a cold edge's first one (its
 * first lifecycle read, in a worker thread) can take longer than `get`'s 10 s on a busy machine.
 */
async function firstAnswer(server: RunningServer, path: string): ReturnType<typeof get> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await get(server.url, path, BENCH_HOST);
    } catch (error) {
      if (attempt === 5) throw error;
    }
  }
}

/** Runs callgrind_control and returns what it printed. */
function callgrindControl(args: string[]): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    // vgdb names its pipes after $USER and $HOST as the server saw them, and startServer sets
    // HOST=127.0.0.1 for the server: the same here, or callgrind_control finds no pipe.
    const child = spawn('callgrind_control', args, {
      stdio: ['ignore', 'pipe', 'ignore'],
      env: { ...process.env, HOST: '127.0.0.1' },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0
        ? resolvePromise(output)
        : reject(new Error(`callgrind_control ${args.join(' ')} exited ${code}`)),
    );
  });
}

function summarize(counted: readonly Counted[], problems: readonly string[]): SuiteReport {
  const per = (label: string) => {
    const row = counted.find((c) => c.label === label);
    return row ? median(row.perWindow) : Number.NaN;
  };
  const direct = per('origin directly');
  const edge = per('Kennel edge');
  const plain = per('plain Node proxy');
  const trafficOff = per('Kennel, traffic off');
  const trafficOn = per('Kennel, traffic on');
  const checks: Check[] = [
    {
      label: 'Kennel edge takes fewer instructions per request than the plain Node proxy',
      passed: edge < plain,
      measured: `${formatRate(edge)} vs ${formatRate(plain)} (${formatRatio(edge / plain)})`,
    },
    {
      label: 'Kennel with traffic recording takes at most 2.5% more instructions per request (issue 27)',
      passed: trafficOn <= trafficOff * (1 + RECORDING_BUDGET),
      measured: `${formatRate(trafficOn)} vs ${formatRate(trafficOff)} (${formatRatio(trafficOn / trafficOff)})`,
    },
  ];
  return {
    suite: edgeInstructionsSuite.name,
    title: `User-space instructions per request under callgrind (${CONNECTIONS} connections, ${WARMUP_SECONDS} s of warm-up, median of ${WINDOWS} windows of ${MEASURE_SECONDS} s)`,
    table: {
      headers: [
        'Server',
        'requests counted',
        'instructions/req',
        'windows range',
        'vs the origin answering directly',
      ],
      rows: counted.map((c) => [
        c.label,
        formatRate(c.requests),
        formatRate(median(c.perWindow)),
        `${formatRate(Math.min(...c.perWindow))}–${formatRate(Math.max(...c.perWindow))}`,
        formatRatio(median(c.perWindow) / direct),
      ]),
      right: [1, 2, 3, 4],
    },
    checks,
    problems,
    warnings: [],
    data: { counted, direct, edge, plain, trafficOff, trafficOn },
  };
}
