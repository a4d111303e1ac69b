import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { BareResponses } from './bare-server.ts';
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
import { runWrk } from './support/wrk.ts';

/**
 * Issue 5: what a proxy costs. wrk against the origin directly, then through the Kennel edge, nginx,
 * Caddy and a plain Node.js proxy (undici Pool), each proxy pinned to the same core as the origin,
 * so the ratio to direct is the share of one core's throughput left once the proxy takes its part.
 * Interleaved rounds, the order rotating; medians.
 */
export const edgeSuite: Suite = {
  name: 'edge',
  description: 'the edge proxying /api/ against the origin directly, nginx, Caddy and a plain Node proxy',
  run: runEdgeSuite,
};

const ROOT = resolve(import.meta.dirname, '..');
export const BENCH_HOST = 'petstore.platform.test';
export const ORIGIN_PATH = '/pets/1';
export const ORIGIN_BODY = JSON.stringify({
  id: 1,
  name: 'Rex',
  category: { id: 1, name: 'Dogs' },
  status: 'available',
  tags: ['good'],
});

/**
 * The Node.js proxies reach their compiled speed only after about 5 s under load (the first
 * seconds run at half of it), so every server gets at least this much before the rounds count.
 */
const NODE_WARMUP_SECONDS = 8;

type TargetKind = 'direct' | 'kennel' | 'kennel-traffic' | 'nginx' | 'caddy' | 'node';

/**
 * The document both Kennel edges serve: the origin's path is an operation and callers send an
 * API key, so the edge with traffic on matches every request and hashes its key (issue 27).
 */
export const BENCH_DOCUMENT = JSON.stringify({
  openapi: '3.0.3',
  info: { title: 'Bench', version: '1' },
  components: { securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } } },
  paths: { '/pets/{petId}': { get: { responses: { '200': { description: 'a pet' } } } } },
});
/** What wrk sends to every target: the Host proxies route by, and a caller's API key. */
export const BENCH_HEADERS = { Host: BENCH_HOST, 'X-Api-Key': 'bench_live_0123456789abcdef' };

interface Target {
  readonly kind: TargetKind;
  readonly label: string;
  readonly server: RunningServer;
  readonly path: string;
}

interface Measurement extends RunFigures {
  readonly round: number;
  readonly target: TargetKind;
}

/** nginx and caddy are looked up first, so a missing one fails before anything starts. */
export function requireProxies(): { nginx: string; caddy: string } {
  const find = (command: string, args: string[]) => {
    const result = spawnSync(command, args, { encoding: 'utf8' });
    return result.error ? null : `${result.stdout}${result.stderr}`.trim().split('\n')[0];
  };
  const nginx = find('nginx', ['-v']);
  const caddy = find('caddy', ['version']);
  const missing = [nginx ? null : 'nginx', caddy ? null : 'caddy'].filter((m) => m !== null);
  if (missing.length > 0) {
    throw new Error(
      `the edge suite compares the edge with nginx and Caddy; not found: ${missing.join(', ')}. Install them with: apt-get install -y nginx caddy`,
    );
  }
  return { nginx: nginx as string, caddy: caddy as string };
}

export async function runEdgeSuite(config: BenchConfig, log: (line: string) => void): Promise<SuiteReport> {
  const versions = requireProxies();
  log(`${versions.nginx}; ${versions.caddy}`);
  const work = mkdtempSync(join(tmpdir(), 'kennel-bench-edge-'));
  const cleanups: (() => Promise<void>)[] = [];
  try {
    const problems: string[] = [];
    log('starting the origin (bench/bare-server.ts)');
    const { origin } = await startPetOrigin(config, work, config.serverCpu);
    cleanups.push(origin.stop);

    // Two Kennel edges, each on its own SQLite file (opened exclusively): traffic off and on.
    const startKennel = async (traffic: 'on' | 'off') => {
      log(
        `starting the Kennel edge (bench/edge-node.ts), traffic recording ${traffic}, on a fresh SQLite database`,
      );
      const edgeDb = await prepareEdgeDatabase({
        location: join(work, `kennel-${traffic}.db`),
        originUrl: origin.url,
        document: BENCH_DOCUMENT,
      });
      const server = await startServer({
        name: `Kennel edge (traffic ${traffic})`,
        node: config.node,
        args: [...START_FLAGS, join(ROOT, 'bench', 'edge-node.ts')],
        cwd: ROOT,
        cpu: config.serverCpu,
        port: await freePort(),
        env: {
          EDGE_DATABASE: edgeDb.location,
          EDGE_CERT_KEY: edgeDb.sealingKey,
          EDGE_TRAFFIC: traffic,
          HTTPS_PORT: String(await freePort()),
          STATS_PORT: String(await freePort()),
        },
        readyPath: '/',
      });
      cleanups.push(server.stop);
      return server;
    };
    const kennel = await startKennel('off');
    const kennelTraffic = await startKennel('on');

    log('starting nginx');
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
        `  upstream origin { server ${new URL(origin.url).host}; keepalive 64; }`,
        '  server {',
        `    listen 127.0.0.1:${nginxPort};`,
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

    log('starting Caddy');
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
        `  bind 127.0.0.1`,
        '  handle_path /api/* {',
        `    reverse_proxy ${new URL(origin.url).host}`,
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
      readyPath: `/api${ORIGIN_PATH}`,
    });
    cleanups.push(caddy.stop);

    log('starting the plain Node.js proxy (bench/plain-proxy.ts)');
    const plain = await startServer({
      name: 'plain Node.js proxy',
      node: config.node,
      args: [join(ROOT, 'bench', 'plain-proxy.ts')],
      cwd: ROOT,
      cpu: config.serverCpu,
      port: await freePort(),
      env: { ORIGIN_URL: origin.url },
      readyPath: `/api${ORIGIN_PATH}`,
    });
    cleanups.push(plain.stop);

    const targets: Target[] = [
      { kind: 'direct', label: 'origin directly', server: origin, path: ORIGIN_PATH },
      { kind: 'kennel', label: 'Kennel edge', server: kennel, path: `/api${ORIGIN_PATH}` },
      {
        kind: 'kennel-traffic',
        label: 'Kennel, traffic on',
        server: kennelTraffic,
        path: `/api${ORIGIN_PATH}`,
      },
      { kind: 'nginx', label: 'nginx', server: nginx, path: `/api${ORIGIN_PATH}` },
      { kind: 'caddy', label: 'Caddy', server: caddy, path: `/api${ORIGIN_PATH}` },
      { kind: 'node', label: 'plain Node proxy', server: plain, path: `/api${ORIGIN_PATH}` },
    ];
    // Every proxy must hand back the origin's body, or the comparison is of different work.
    for (const target of targets) {
      const answer = await get(target.server.url, target.path, BENCH_HOST);
      if (answer.status !== 200 || answer.body !== ORIGIN_BODY) {
        throw new Error(
          `${target.label} answered ${answer.status} ${JSON.stringify(answer.body.slice(0, 200))} for ${target.path}, not the origin's answer`,
        );
      }
    }

    const measure = async (round: number, target: Target, seconds: number): Promise<Measurement> => {
      const figures = await measureRun(
        config,
        {
          server: target.server,
          path: target.path,
          seconds,
          headers: BENCH_HEADERS,
          companionPids: target.kind === 'direct' ? [] : [origin.pid],
        },
        (disturbed) => log(`  ${target.label}: ${describe(disturbed)}; measuring again`),
      );
      return { ...figures, round, target: target.kind };
    };

    if (config.warmupSeconds > 0) {
      const warmup = Math.max(config.warmupSeconds, NODE_WARMUP_SECONDS);
      log(`warm-up: ${warmup} s per server`);
      for (const target of targets) {
        const m = await measure(0, target, warmup);
        if (m.problem) problems.push(`warm-up, ${target.label}: ${m.problem}`);
      }
    }
    const measurements: Measurement[] = [];
    for (let round = 1; round <= config.rounds; round++) {
      const order = targets.map((_, i) => targets[(i + round - 1) % targets.length] as Target);
      for (const target of order) {
        const m = await measure(round, target, config.durationSeconds);
        measurements.push(m);
        log(`round ${round}/${config.rounds}  ${target.label.padEnd(17)}  ${describe(m)}`);
        if (m.problem) problems.push(`round ${round}, ${target.label}: ${m.problem}`);
      }
    }
    const slices = await measureSlices(config, targets, problems, log);
    const recording = await measureRecordingPairs(config, targets, problems, log);
    return summarize(config, targets, measurements, problems, slices, recording);
  } finally {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((error: Error) => log(`cleanup failed: ${error.message}`));
    }
    rmSync(work, { recursive: true, force: true });
  }
}

/** Pairs of one-second runs per proxy: the origin directly, then the proxy at once after it. */
const SLICE_SECONDS = 1;

interface Slices {
  readonly count: number;
  /** Per proxy: each pair's proxy req/s over the direct req/s just before it. */
  readonly ratios: Partial<Record<TargetKind, number[]>>;
}

/**
 * This VM's speed drifts by a third between phases a few tens of seconds long (other tenants of
 * the host), so medians of separate 4-second runs can put a proxy's runs in a fast phase and the
 * direct ones in a slow one. Here each proxy's second of load comes right after a second of the
 * origin alone, with no pause between: nearly every pair falls in one phase, and the median of
 * the pairs' ratios is the share of direct throughput the proxy keeps.
 */
async function measureSlices(
  config: BenchConfig,
  targets: readonly Target[],
  problems: string[],
  log: (line: string) => void,
): Promise<Slices> {
  const count = Number(process.env.BENCH_EDGE_SLICES ?? 15);
  const ratios: Partial<Record<TargetKind, number[]>> = {};
  const direct = targets[0] as Target;
  const proxies = targets.slice(1);
  const rate = async (target: Target) => {
    const result = await runWrk({
      url: `${target.server.url}${target.path}`,
      connections: config.connections,
      durationSeconds: SLICE_SECONDS,
      cpu: config.loadCpu,
      headers: BENCH_HEADERS,
    });
    const errors = Object.values(result.socketErrors).reduce((a, b) => a + b, 0);
    if (result.non2xx > 0 || errors > 0)
      problems.push(`slices, ${target.label}: ${result.non2xx} error answers, ${errors} socket errors`);
    return result.requestsPerSecond;
  };
  log(`paired slices: ${count} x (1 s direct, then 1 s through each proxy)`);
  for (let slice = 0; slice < count; slice++) {
    for (let i = 0; i < proxies.length; i++) {
      const proxy = proxies[(i + slice) % proxies.length] as Target;
      const base = await rate(direct);
      const through = await rate(proxy);
      const list = ratios[proxy.kind] ?? [];
      list.push(through / base);
      ratios[proxy.kind] = list;
    }
  }
  for (const proxy of proxies) {
    const values = ratios[proxy.kind] ?? [];
    log(
      `  ${proxy.label.padEnd(17)} median ${formatRatio(median(values))} of the direct second before it (${values.length} pairs)`,
    );
  }
  return { count, ratios };
}

/**
 * Issue 27's cost of traffic recording, paired as the slices are: one second through the edge
 * with recording off, then at once one second through the edge with it on (the order swapping
 * each pair so neither always runs second); the median of on/off is the share kept.
 */
async function measureRecordingPairs(
  config: BenchConfig,
  targets: readonly Target[],
  problems: string[],
  log: (line: string) => void,
): Promise<number[]> {
  const count = Number(process.env.BENCH_EDGE_SLICES ?? 15);
  const off = targets.find((t) => t.kind === 'kennel') as Target;
  const on = targets.find((t) => t.kind === 'kennel-traffic') as Target;
  const rate = async (target: Target) => {
    const result = await runWrk({
      url: `${target.server.url}${target.path}`,
      connections: config.connections,
      durationSeconds: SLICE_SECONDS,
      cpu: config.loadCpu,
      headers: BENCH_HEADERS,
    });
    const errors = Object.values(result.socketErrors).reduce((a, b) => a + b, 0);
    if (result.non2xx > 0 || errors > 0)
      problems.push(
        `recording pairs, ${target.label}: ${result.non2xx} error answers, ${errors} socket errors`,
      );
    return result.requestsPerSecond;
  };
  log(`recording pairs: ${count} x (1 s traffic off, 1 s traffic on, order swapping)`);
  const ratios: number[] = [];
  for (let pair = 0; pair < count; pair++) {
    let offRate: number;
    let onRate: number;
    if (pair % 2 === 0) {
      offRate = await rate(off);
      onRate = await rate(on);
    } else {
      onRate = await rate(on);
      offRate = await rate(off);
    }
    ratios.push(onRate / offRate);
  }
  log(`  traffic on keeps median ${formatRatio(median(ratios))} of traffic off (${ratios.length} pairs)`);
  return ratios;
}

/**
 * The origin of the proxy suites: a bare node:http server (bench/bare-server.ts) answering
 * `GET /pets/1` with ORIGIN_BODY, pinned to `cpu`; `responsesFile` starts more of it.
 */
export async function startPetOrigin(
  config: BenchConfig,
  work: string,
  cpu: string,
): Promise<{ origin: RunningServer; responsesFile: string }> {
  const responses: BareResponses = {
    fixed: [
      {
        method: 'GET',
        url: ORIGIN_PATH,
        status: 200,
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: ORIGIN_BODY,
      },
    ],
    orders: [],
  };
  const responsesFile = join(work, 'origin.json');
  writeFileSync(responsesFile, JSON.stringify(responses));
  const origin = await startServer({
    name: 'origin',
    node: config.node,
    args: [join(ROOT, 'bench', 'bare-server.ts')],
    cwd: ROOT,
    cpu,
    port: await freePort(),
    env: { BARE_RESPONSES: responsesFile },
    readyPath: '/',
  });
  return { origin, responsesFile };
}

/** One GET with a Host header (fetch cannot set Host). */
export function get(
  base: string,
  path: string,
  host: string,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(base);
    const req = request(
      { host: url.hostname, port: url.port, path, headers: { host }, timeout: 10_000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`no answer from ${base}${path} within 10 s`)));
    req.end();
  });
}

function describe(m: RunFigures): string {
  return [
    `${formatRate(m.requestsPerSecond).padStart(7)} req/s`,
    `p99 ${formatMs(m.p99Ms).padStart(9)}`,
    `CPU ${m.serverUsPerRequest.toFixed(1)} µs/req + origin ${m.companionUsPerRequest.toFixed(1)} µs`,
    `other CPU ${m.otherCores.toFixed(2)}`,
    ...(m.problem ? [`FAILED: ${m.problem}`] : []),
  ].join('  ');
}

function summarize(
  config: BenchConfig,
  targets: readonly Target[],
  measurements: readonly Measurement[],
  problems: readonly string[],
  slices: Slices,
  recording: readonly number[],
): SuiteReport {
  const stats = (kind: TargetKind) => {
    const clean = measurements.filter((m) => m.target === kind && !m.problem);
    const rates = clean.map((m) => m.requestsPerSecond);
    return {
      rounds: clean.length,
      requestsPerSecond: median(rates),
      p99Ms: median(clean.map((m) => m.p99Ms)),
      serverUsPerRequest: median(clean.map((m) => m.serverUsPerRequest)),
      originUsPerRequest: median(clean.map((m) => m.companionUsPerRequest)),
      min: Math.min(...rates),
      max: Math.max(...rates),
      otherCores: Math.max(...clean.map((m) => m.otherCores)),
    };
  };
  const direct = stats('direct');
  const figures: Record<string, unknown> = {};
  const rows = targets.map((target) => {
    const s = stats(target.kind);
    const vsDirect = s.requestsPerSecond / direct.requestsPerSecond;
    const us = (value: number) => (Number.isFinite(value) ? `${value.toFixed(1)} µs` : '-');
    // CPU per request of everything on the shared core: steadier than req/s on a busy machine.
    const coreUs =
      target.kind === 'direct' ? s.serverUsPerRequest : s.serverUsPerRequest + s.originUsPerRequest;
    const vsDirectByCpu = direct.serverUsPerRequest / coreUs;
    figures[target.kind] = { ...s, vsDirect, vsDirectByCpu };
    return [
      target.label,
      formatRate(s.requestsPerSecond),
      formatMs(s.p99Ms),
      target.kind === 'direct' ? '100%' : formatRatio(vsDirect),
      target.kind === 'direct' ? '100%' : formatRatio(vsDirectByCpu),
      us(s.serverUsPerRequest),
      target.kind === 'direct' ? '-' : us(s.originUsPerRequest),
      s.rounds === 0 ? '-' : `${formatRate(s.min)}–${formatRate(s.max)}`,
      `${s.rounds}/${config.rounds}`,
      Number.isFinite(s.otherCores) ? s.otherCores.toFixed(2) : '-',
    ];
  });
  const kennel = stats('kennel');
  const caddy = stats('caddy');
  const plain = stats('node');
  const versus = (rps: number, base: number) =>
    `${formatRatio(rps / base)} (${formatRate(rps)} vs ${formatRate(base)} req/s)`;
  const paired = (kind: TargetKind) => median(slices.ratios[kind] ?? []);
  const pairedText = (kind: TargetKind) => `${formatRatio(paired(kind))} in paired seconds`;
  const checks: Check[] = [
    {
      label: 'Kennel edge with traffic recording >= 97% of it without (paired seconds)',
      passed: median([...recording]) >= 0.97,
      measured: `${formatRatio(median([...recording]))} in ${recording.length} pairs (lowest ${formatRatio(Math.min(...recording))}, highest ${formatRatio(Math.max(...recording))}); medians of the rounds ${versus(stats('kennel-traffic').requestsPerSecond, kennel.requestsPerSecond)}`,
    },
    {
      label: 'Kennel edge >= 25% of direct-to-origin req/s (paired seconds)',
      passed: paired('kennel') >= 0.25,
      measured: `${pairedText('kennel')}; medians of the rounds ${versus(kennel.requestsPerSecond, direct.requestsPerSecond)}`,
    },
    {
      label: 'Kennel edge ahead of Caddy (paired seconds)',
      passed: paired('kennel') > paired('caddy'),
      measured: `${pairedText('kennel')} vs ${formatRatio(paired('caddy'))}; rounds ${formatRate(kennel.requestsPerSecond)} vs ${formatRate(caddy.requestsPerSecond)} req/s`,
    },
    {
      label: 'Kennel edge ahead of the plain Node proxy (undici Pool) (paired seconds)',
      passed: paired('kennel') > paired('node'),
      measured: `${pairedText('kennel')} vs ${formatRatio(paired('node'))}; rounds ${formatRate(kennel.requestsPerSecond)} vs ${formatRate(plain.requestsPerSecond)} req/s`,
    },
  ];
  const labelOf = (kind: TargetKind) => targets.find((t) => t.kind === kind)?.label ?? kind;
  const warnings = measurements.flatMap((m) =>
    disturbanceNotes(config, `round ${m.round}, ${labelOf(m.target)}`, m),
  );
  return {
    suite: 'edge',
    title: `Proxies: GET /api${ORIGIN_PATH} (origin: GET ${ORIGIN_PATH}), proxy and origin on CPU ${config.serverCpu}, ${config.connections} connections, medians of ${config.rounds} rounds x ${config.durationSeconds} s`,
    table: {
      headers: [
        'Server',
        'req/s',
        'p99',
        'vs direct',
        'vs direct by CPU',
        'proxy CPU/req',
        'origin CPU/req',
        'req/s range',
        'rounds',
        'other CPU',
      ],
      rows,
      right: [1, 2, 3, 4, 5, 6, 7, 9],
    },
    moreTables: [
      {
        title: `Paired seconds: ${slices.count} x (1 s of the origin directly, then at once 1 s through each proxy); the share of the direct second each proxy kept`,
        table: {
          headers: ['Server', 'median', 'lowest', 'highest', 'pairs'],
          rows: targets.slice(1).map((target) => {
            const values = slices.ratios[target.kind] ?? [];
            return [
              target.label,
              formatRatio(median(values)),
              formatRatio(Math.min(...values)),
              formatRatio(Math.max(...values)),
              String(values.length),
            ];
          }),
          right: [1, 2, 3, 4],
        },
      },
    ],
    checks,
    problems,
    warnings,
    data: { figures, measurements, slices, recording },
  };
}
