import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BENCH_HOST, get, ORIGIN_BODY, ORIGIN_PATH, startPetOrigin } from './edge.ts';
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
 * edge and the plain Node.js proxy (bench/plain-proxy.ts). On a shared VM the `edge` suite's
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

    const targets: { label: string; script: string; path: string; env: Record<string, string> }[] = [
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
      {
        label: 'plain Node proxy',
        script: join(ROOT, 'bench', 'plain-proxy.ts'),
        path: `/api${ORIGIN_PATH}`,
        env: { ORIGIN_URL: origin.url },
      },
    ];
    for (const target of targets) {
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
        const answer = await get(server.url, target.path, BENCH_HOST);
        if (answer.status !== 200 || answer.body !== ORIGIN_BODY) {
          throw new Error(`${target.label} answered ${answer.status}, not the origin's answer`);
        }
        log(`${target.label}: warm-up ${WARMUP_SECONDS} s`);
        await load(config, server, target.path, WARMUP_SECONDS);
        const pid = String(server.pid);
        const perWindow: number[] = [];
        let requests = 0;
        for (let window = 1; window <= WINDOWS; window++) {
          await callgrindControl(['--zero', pid]);
          await callgrindControl(['-i', 'on', pid]);
          const run = await load(config, server, target.path, MEASURE_SECONDS);
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

async function load(
  config: BenchConfig,
  server: RunningServer,
  path: string,
  seconds: number,
): Promise<{ requests: number; problem: string | null }> {
  const result = await runWrk({
    url: `${server.url}${path}`,
    connections: CONNECTIONS,
    durationSeconds: seconds,
    cpu: config.loadCpu,
    headers: { Host: BENCH_HOST },
  });
  const errors = Object.values(result.socketErrors).reduce((a, b) => a + b, 0);
  return {
    requests: result.requests,
    problem:
      result.non2xx > 0 || errors > 0 ? `${result.non2xx} error answers, ${errors} socket errors` : null,
  };
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
  const checks: Check[] = [
    {
      label: 'Kennel edge takes fewer instructions per request than the plain Node proxy',
      passed: edge < plain,
      measured: `${formatRate(edge)} vs ${formatRate(plain)} (${formatRatio(edge / plain)})`,
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
    data: { counted, direct, edge, plain },
  };
}
