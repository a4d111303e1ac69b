import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInternalCa, InternalIssuer } from '../src/platform/certificates/internal-issuer.ts';
import { BENCH_HOST, ORIGIN_BODY, ORIGIN_PATH, requireProxies, startPetOrigin } from './edge.ts';
import type { BenchConfig } from './support/config.ts';
import { cpuSnapshot, cpuUse, waitForQuiet } from './support/cpu.ts';
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
 * Issue 29: the edge over HTTP/2. h2load (Debian's nghttp2-client) against the Kennel edge's HTTPS
 * listener over h2, nginx (`listen … ssl http2`) and Caddy on the same origin, with the same kind
 * of certificate (ECDSA P-256 from the internal CA), TLS 1.3, and the same connections and streams
 * per connection; and the edge's own HTTP/1.1 over TLS at the same concurrency (h2load --h1, one
 * request per connection at a time). Every proxy is pinned to the origin's core, as in the edge
 * suite. Interleaved rounds, the order rotating; medians. p99 from h2load's per-request log.
 */
export const edgeHttp2Suite: Suite = {
  name: 'edge-h2',
  description: 'the edge over HTTP/2 (h2load) against nginx and Caddy over h2, and its own HTTP/1.1 over TLS',
  run: runEdgeHttp2Suite,
};

const ROOT = resolve(import.meta.dirname, '..');
/** h2 connections and streams per connection; HTTP/1.1 gets CONNECTIONS x STREAMS connections. */
const CONNECTIONS = Number(process.env.BENCH_H2_CONNECTIONS ?? 8);
const STREAMS = Number(process.env.BENCH_H2_STREAMS ?? 8);
const NODE_WARMUP_SECONDS = 8;

type TargetKind = 'kennel-h2' | 'nginx-h2' | 'caddy-h2' | 'kennel-h1';

interface Target {
  readonly kind: TargetKind;
  readonly label: string;
  readonly server: RunningServer;
  readonly httpsPort: number;
  readonly h1: boolean;
}

interface Measurement {
  readonly round: number;
  readonly target: TargetKind;
  readonly requestsPerSecond: number;
  readonly p99Ms: number;
  readonly serverUsPerRequest: number;
  readonly originUsPerRequest: number;
  readonly otherCores: number;
  readonly problem: string | null;
}

function requireH2load(): string {
  const result = spawnSync('h2load', ['--version'], { encoding: 'utf8' });
  if (result.error)
    throw new Error('the edge-h2 suite runs h2load; install it with: apt-get install -y nghttp2-client');
  return `${result.stdout}`.trim().split('\n')[0] ?? 'h2load';
}

export async function runEdgeHttp2Suite(
  config: BenchConfig,
  log: (line: string) => void,
): Promise<SuiteReport> {
  const versions = requireProxies();
  log(`${requireH2load()}; ${versions.nginx}; ${versions.caddy}`);
  const work = mkdtempSync(join(tmpdir(), 'kennel-bench-edge-h2-'));
  const cleanups: (() => Promise<void>)[] = [];
  try {
    const problems: string[] = [];
    const { origin } = await startPetOrigin(config, work, config.serverCpu);
    cleanups.push(origin.stop);
    const originHost = new URL(origin.url).host;

    // One certificate for nginx and Caddy, of the kind the edge serves (its internal CA's).
    const edgeDb = await prepareEdgeDatabase({ location: join(work, 'kennel.db'), originUrl: origin.url });
    const certificate = await new InternalIssuer(await createInternalCa()).issue(BENCH_HOST);
    const certFile = join(work, 'cert.pem');
    const keyFile = join(work, 'key.pem');
    writeFileSync(certFile, certificate.certificatePem);
    writeFileSync(keyFile, certificate.privateKeyPem);

    log('starting the Kennel edge (bench/edge-node.ts)');
    const kennelHttps = await freePort();
    const kennel = await startServer({
      name: 'Kennel edge',
      node: config.node,
      args: [...START_FLAGS, join(ROOT, 'bench', 'edge-node.ts')],
      cwd: ROOT,
      cpu: config.serverCpu,
      port: await freePort(),
      env: {
        EDGE_DATABASE: edgeDb.location,
        EDGE_CERT_KEY: edgeDb.sealingKey,
        HTTPS_PORT: String(kennelHttps),
        STATS_PORT: String(await freePort()),
      },
      readyPath: '/',
    });
    cleanups.push(kennel.stop);

    log('starting nginx (listen ssl http2)');
    const nginxHttps = await freePort();
    const nginxPort = await freePort();
    mkdirSync(join(work, 'nginx'));
    writeFileSync(
      join(work, 'nginx', 'nginx.conf'),
      [
        'worker_processes 1;',
        'daemon off;',
        'master_process on;',
        `pid ${join(work, 'nginx', 'nginx.pid')};`,
        `error_log ${join(work, 'nginx', 'error.log')} error;`,
        'events { worker_connections 4096; }',
        'http {',
        '  access_log off;',
        `  client_body_temp_path ${join(work, 'nginx')};`,
        `  proxy_temp_path ${join(work, 'nginx')};`,
        `  upstream origin { server ${originHost}; keepalive 64; }`,
        '  server {',
        `    listen 127.0.0.1:${nginxPort};`,
        `    listen 127.0.0.1:${nginxHttps} ssl http2;`,
        `    ssl_certificate ${certFile};`,
        `    ssl_certificate_key ${keyFile};`,
        '    ssl_protocols TLSv1.2 TLSv1.3;',
        // nginx ends an h2 connection after 1000 requests by default (h2load does not reconnect
        // in a timed run); Kennel and Caddy keep it.
        '    keepalive_requests 100000000;',
        // nginx 1.22's default is 128 streams per connection; Kennel's is 100: h2load opens fewer.
        '    location /api/ {',
        '      proxy_pass http://origin/;',
        '      proxy_http_version 1.1;',
        '      proxy_set_header Connection "";',
        '      proxy_set_header Host $host;',
        '      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
        '      proxy_set_header X-Forwarded-Proto $scheme;',
        '    }',
        '  }',
        '}',
        '',
      ].join('\n'),
    );
    const nginx = await startServer({
      name: 'nginx',
      node: 'nginx',
      args: [
        '-p',
        join(work, 'nginx'),
        '-c',
        join(work, 'nginx', 'nginx.conf'),
        '-e',
        join(work, 'nginx', 'error.log'),
      ],
      cwd: work,
      cpu: config.serverCpu,
      port: nginxPort,
      env: {},
      readyPath: `/api${ORIGIN_PATH}`,
    });
    cleanups.push(nginx.stop);

    log('starting Caddy (h2 over TLS)');
    const caddyHttps = await freePort();
    const caddyPort = await freePort();
    mkdirSync(join(work, 'caddy'));
    writeFileSync(
      join(work, 'caddy', 'Caddyfile'),
      [
        '{',
        '  admin off',
        '  auto_https off',
        '}',
        `http://:${caddyPort} {`,
        '  bind 127.0.0.1',
        '  respond "ready"',
        '}',
        `https://${BENCH_HOST}:${caddyHttps} {`,
        '  bind 127.0.0.1',
        `  tls ${certFile} ${keyFile}`,
        '  handle_path /api/* {',
        `    reverse_proxy ${originHost}`,
        '  }',
        '}',
        '',
      ].join('\n'),
    );
    const caddy = await startServer({
      name: 'Caddy',
      node: 'caddy',
      args: ['run', '--config', join(work, 'caddy', 'Caddyfile'), '--adapter', 'caddyfile'],
      cwd: work,
      cpu: config.serverCpu,
      port: caddyPort,
      env: {
        XDG_DATA_HOME: join(work, 'caddy'),
        XDG_CONFIG_HOME: join(work, 'caddy'),
        HOME: join(work, 'caddy'),
      },
      readyPath: '/',
    });
    cleanups.push(caddy.stop);

    const targets: Target[] = [
      { kind: 'kennel-h2', label: 'Kennel edge, h2', server: kennel, httpsPort: kennelHttps, h1: false },
      { kind: 'nginx-h2', label: 'nginx, h2', server: nginx, httpsPort: nginxHttps, h1: false },
      { kind: 'caddy-h2', label: 'Caddy, h2', server: caddy, httpsPort: caddyHttps, h1: false },
      {
        kind: 'kennel-h1',
        label: 'Kennel edge, HTTP/1.1 TLS',
        server: kennel,
        httpsPort: kennelHttps,
        h1: true,
      },
    ];
    // Every server must hand back the origin's body over the protocol measured.
    for (const target of targets) {
      const check = spawnSync(
        'curl',
        [
          '-sk',
          target.h1 ? '--http1.1' : '--http2',
          '-w',
          '\n%{http_version}',
          '--resolve',
          `${BENCH_HOST}:${target.httpsPort}:127.0.0.1`,
          `https://${BENCH_HOST}:${target.httpsPort}/api${ORIGIN_PATH}`,
        ],
        { encoding: 'utf8' },
      );
      const [body, version] = [
        check.stdout.slice(0, check.stdout.lastIndexOf('\n')),
        check.stdout.split('\n').at(-1),
      ];
      if (body !== ORIGIN_BODY || version !== (target.h1 ? '1.1' : '2'))
        throw new Error(`${target.label} answered HTTP/${version} ${JSON.stringify(body.slice(0, 200))}`);
    }

    const measure = async (round: number, target: Target, seconds: number): Promise<Measurement> => {
      await waitForQuiet(config.noiseLimitCores, config.quietWaitSeconds * 1000, target.server.pid);
      const before = cpuSnapshot(target.server.pid, [], [origin.pid]);
      const run = await runH2load(work, target, seconds, config.loadCpu);
      const use = cpuUse(before, cpuSnapshot(target.server.pid, [], [origin.pid]));
      const per = (s: number) => (run.succeeded > 0 ? (s * 1e6) / run.succeeded : Number.NaN);
      return {
        round,
        target: target.kind,
        requestsPerSecond: run.requestsPerSecond,
        p99Ms: run.p99Ms,
        serverUsPerRequest: per(use.serverSeconds),
        originUsPerRequest: per(use.companionSeconds),
        otherCores: use.otherCores,
        problem: run.problem,
      };
    };
    const describe = (m: Measurement) =>
      `${formatRate(m.requestsPerSecond).padStart(7)} req/s  p99 ${formatMs(m.p99Ms).padStart(9)}  CPU ${m.serverUsPerRequest.toFixed(1)} µs/req + origin ${m.originUsPerRequest.toFixed(1)} µs  other CPU ${m.otherCores.toFixed(2)}${m.problem ? `  FAILED: ${m.problem}` : ''}`;

    if (config.warmupSeconds > 0) {
      const warmup = Math.max(config.warmupSeconds, NODE_WARMUP_SECONDS);
      log(`warm-up: ${warmup} s per server`);
      for (const target of targets) await measure(0, target, warmup);
    }
    const measurements: Measurement[] = [];
    for (let round = 1; round <= config.rounds; round++) {
      const order = targets.map((_, i) => targets[(i + round - 1) % targets.length] as Target);
      for (const target of order) {
        const m = await measure(round, target, config.durationSeconds);
        measurements.push(m);
        log(`round ${round}/${config.rounds}  ${target.label.padEnd(26)}  ${describe(m)}`);
        if (m.problem) problems.push(`round ${round}, ${target.label}: ${m.problem}`);
      }
    }
    return summarize(config, targets, measurements, problems);
  } finally {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((error: Error) => log(`cleanup failed: ${error.message}`));
    }
    rmSync(work, { recursive: true, force: true });
  }
}

export interface H2loadRun {
  readonly requestsPerSecond: number;
  readonly succeeded: number;
  readonly p99Ms: number;
  readonly problem: string | null;
}

/** What one h2load run is asked: `connections` x `streams` (HTTP/1.1: one request per connection at a time). */
export interface H2loadOptions {
  readonly port: number;
  readonly connections: number;
  readonly streams: number;
  readonly h1: boolean;
  /** How long h2load sends; or, with `requests`, ignored. */
  readonly seconds: number;
  /** A number of requests to send instead of a duration. */
  readonly requests?: number;
  /** taskset CPU list for h2load. */
  readonly cpu: string;
  /** h2load's per-request log, for the p99 (removed first: h2load appends to it). */
  readonly logFile: string;
  /** Seconds h2load sends before it starts counting (default 1; 0: counts from the first request). */
  readonly warmUpSeconds?: number;
}

/** One h2load run pinned to the load CPU; p99 from its per-request log (duration in µs, 3rd column). */
async function runH2load(work: string, target: Target, seconds: number, cpu: string): Promise<H2loadRun> {
  return h2load({
    port: target.httpsPort,
    connections: target.h1 ? CONNECTIONS * STREAMS : CONNECTIONS,
    streams: target.h1 ? 1 : STREAMS,
    h1: target.h1,
    seconds,
    cpu,
    logFile: join(work, `h2load-${target.kind}.log`),
  });
}

/** `GET /api${ORIGIN_PATH}` for BENCH_HOST with h2load over TLS at 127.0.0.1:`port`. */
export async function h2load(options: H2loadOptions): Promise<H2loadRun> {
  const { logFile } = options;
  const warmUp = options.warmUpSeconds ?? 1;
  // h2load appends to its log: without this, a round's p99 would count the warm-up's and the
  // earlier rounds' requests too (a fresh node's first seconds among them).
  rmSync(logFile, { force: true });
  const args = [
    '-c',
    options.cpu,
    'h2load',
    '-t',
    '1',
    '-c',
    String(options.connections),
    '-m',
    String(options.streams),
    ...(options.requests === undefined ? ['-D', String(options.seconds)] : ['-n', String(options.requests)]),
    ...(warmUp > 0 ? [`--warm-up-time=${warmUp}`] : []),
    ...(options.h1 ? ['--h1'] : []),
    `--connect-to=127.0.0.1:${options.port}`,
    `--log-file=${logFile}`,
    `https://${BENCH_HOST}:${options.port}/api${ORIGIN_PATH}`,
  ];
  const output = await new Promise<{ code: number; stdout: string }>((done) => {
    const child = spawn('taskset', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.resume();
    child.once('exit', (code) => done({ code: code ?? -1, stdout }));
  });
  const rate = /finished in [\d.]+s, ([\d.]+) req\/s/.exec(output.stdout);
  const counts =
    /requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(
      output.stdout,
    );
  const status = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(output.stdout);
  const durations = readFileSync(logFile, 'utf8')
    .trim()
    .split('\n')
    .map((line) => Number(line.split('\t')[2]))
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  const p99Us = durations[Math.min(durations.length - 1, Math.floor(durations.length * 0.99))] ?? Number.NaN;
  const failed = counts ? Number(counts[5]) + Number(counts[6]) : Number.NaN;
  const bad = status ? Number(status[3]) + Number(status[4]) : Number.NaN;
  const problem =
    output.code !== 0 || !rate || !counts
      ? `h2load exited with ${output.code}: ${output.stdout.slice(-300)}`
      : Number(counts[4]) === 0
        ? 'no request succeeded'
        : failed > 0 || bad > 0
          ? `${failed} failed or errored requests, ${bad} 4xx/5xx answers`
          : null;
  return {
    requestsPerSecond: rate ? Number(rate[1]) : Number.NaN,
    succeeded: counts ? Number(counts[4]) : 0,
    p99Ms: p99Us / 1000,
    problem,
  };
}

function summarize(
  config: BenchConfig,
  targets: readonly Target[],
  measurements: readonly Measurement[],
  problems: readonly string[],
): SuiteReport {
  const stats = (kind: TargetKind) => {
    const clean = measurements.filter((m) => m.target === kind && !m.problem);
    const rates = clean.map((m) => m.requestsPerSecond);
    return {
      rounds: clean.length,
      requestsPerSecond: median(rates),
      p99Ms: median(clean.map((m) => m.p99Ms)),
      serverUsPerRequest: median(clean.map((m) => m.serverUsPerRequest)),
      originUsPerRequest: median(clean.map((m) => m.originUsPerRequest)),
      min: Math.min(...rates),
      max: Math.max(...rates),
      otherCores: Math.max(...clean.map((m) => m.otherCores)),
    };
  };
  const kennel = stats('kennel-h2');
  const figures: Record<string, unknown> = {};
  const us = (value: number) => (Number.isFinite(value) ? `${value.toFixed(1)} µs` : '-');
  const rows = targets.map((target) => {
    const s = stats(target.kind);
    figures[target.kind] = s;
    return [
      target.label,
      formatRate(s.requestsPerSecond),
      formatMs(s.p99Ms),
      target.kind === 'kennel-h2' ? '100%' : formatRatio(kennel.requestsPerSecond / s.requestsPerSecond),
      us(s.serverUsPerRequest),
      us(s.originUsPerRequest),
      s.rounds === 0 ? '-' : `${formatRate(s.min)}–${formatRate(s.max)}`,
      `${s.rounds}/${config.rounds}`,
      Number.isFinite(s.otherCores) ? s.otherCores.toFixed(2) : '-',
    ];
  });
  const nginx = stats('nginx-h2');
  const caddy = stats('caddy-h2');
  const h1 = stats('kennel-h1');
  const checks: Check[] = [
    {
      label: 'Kennel edge over h2 ahead of Caddy over h2',
      passed: kennel.requestsPerSecond > caddy.requestsPerSecond,
      measured: `${formatRate(kennel.requestsPerSecond)} vs ${formatRate(caddy.requestsPerSecond)} req/s`,
    },
    {
      label: "Kennel edge over h2 >= 80% of nginx's req/s over h2",
      passed: kennel.requestsPerSecond >= 0.8 * nginx.requestsPerSecond,
      measured: `${formatRatio(kennel.requestsPerSecond / nginx.requestsPerSecond)} (${formatRate(kennel.requestsPerSecond)} vs ${formatRate(nginx.requestsPerSecond)} req/s)`,
    },
    {
      label: "Kennel edge's h2 p99 no worse than its HTTP/1.1 over TLS at the same concurrency",
      passed: kennel.p99Ms <= h1.p99Ms,
      measured: `${formatMs(kennel.p99Ms)} vs ${formatMs(h1.p99Ms)}`,
    },
  ];
  return {
    suite: 'edge-h2',
    title: `HTTP/2: GET /api${ORIGIN_PATH} over TLS with h2load, ${CONNECTIONS} connections x ${STREAMS} streams (HTTP/1.1: ${CONNECTIONS * STREAMS} connections), proxy and origin on CPU ${config.serverCpu}, medians of ${config.rounds} rounds x ${config.durationSeconds} s`,
    table: {
      headers: [
        'Server',
        'req/s',
        'p99',
        'Kennel h2 vs this',
        'proxy CPU/req',
        'origin CPU/req',
        'req/s range',
        'rounds',
        'other CPU',
      ],
      rows,
      right: [1, 2, 3, 4, 5, 6, 8],
    },
    checks,
    problems,
    warnings: measurements
      .filter((m) => m.otherCores > config.noiseLimitCores)
      .map((m) => `round ${m.round}, ${m.target}: other processes used ${m.otherCores.toFixed(2)} cores`),
    data: { figures, measurements },
  };
}
