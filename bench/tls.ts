import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { connect } from 'node:tls';
import { InternalIssuer } from '../src/platform/certificates/internal-issuer.ts';
import type { BenchConfig } from './support/config.ts';
import { cpuSnapshot, cpuUse, waitForQuiet } from './support/cpu.ts';
import { disturbanceNotes } from './support/measure.ts';
import { type openPlatform, prepareEdgeDatabase } from './support/platform.ts';
import { createBenchDatabase } from './support/postgres.ts';
import {
  type Check,
  formatRate,
  formatRatio,
  median,
  type Suite,
  type SuiteReport,
} from './support/report.ts';
import { freePort, type RunningServer, START_FLAGS, startServer } from './support/servers.ts';
import { buildLoadGenerator, type HandshakeRun, runHandshakes } from './support/tls-load.ts';

/**
 * Issue 5: TLS handshakes per second at the edge, full and resumed (session tickets), with one
 * certificate in the store and with 10,000 (the SNI cache filled from the database, certificates
 * issued by the internal CA and saved through the certificate store), the memory those take, and
 * a session from one edge node resuming on another sharing the database.
 */
export const tlsSuite: Suite = {
  name: 'tls',
  description:
    'TLS handshakes/s (full, resumed) with 1 and 10,000 certificates; memory; resumption across nodes',
  run: runTlsSuite,
};

const ROOT = resolve(import.meta.dirname, '..');
const NAME_SUFFIX = '.tls.bench.test';
const hostname = (i: number) => `h${String(i).padStart(5, '0')}${NAME_SUFFIX}`;

type Mode = 'full' | 'resumed';
type StoreKind = 'one' | 'many';

interface EdgeNode {
  readonly server: RunningServer;
  readonly httpsPort: number;
  readonly statsPort: number;
}

interface Measurement {
  readonly round: number;
  readonly store: StoreKind;
  readonly mode: Mode;
  readonly perSecond: number;
  /** CPU of the edge process per handshake, in microseconds. */
  readonly serverUs: number;
  /** The edge's CPU use during the run, in cores: near 1 when the server, not the client, bounds. */
  readonly serverCores: number;
  readonly otherCores: number;
  readonly stealCores: number;
  readonly attempts: number;
  readonly problem: string | null;
}

/** One TLS connection with SNI `servername`; what the edge presented and whether it resumed. */
function handshakeOnce(
  port: number,
  servername: string,
  options: { ca: string; session?: Buffer; maxVersion?: 'TLSv1.2' | 'TLSv1.3' },
): Promise<{ reused: boolean; session: Buffer | undefined; subjectAltName: string; authorized: boolean }> {
  return new Promise((resolvePromise, reject) => {
    let session: Buffer | undefined;
    const socket = connect({
      host: '127.0.0.1',
      port,
      servername,
      ca: options.ca,
      session: options.session,
      maxVersion: options.maxVersion ?? 'TLSv1.3',
      rejectUnauthorized: false,
    });
    // TLS 1.3 tickets arrive after the handshake: wait for one (or the end) before answering.
    socket.on('session', (ticket: Buffer) => {
      session ??= ticket;
      finish();
    });
    let connected = false;
    const finish = () => {
      if (
        !connected ||
        (session === undefined && socket.getProtocol() === 'TLSv1.3' && !socket.isSessionReused())
      )
        return;
      const peer = socket.getPeerX509Certificate();
      resolvePromise({
        reused: socket.isSessionReused(),
        session: session ?? socket.getSession(),
        subjectAltName: peer?.subjectAltName ?? '',
        authorized: socket.authorized,
      });
      socket.end();
    };
    socket.once('secureConnect', () => {
      connected = true;
      finish();
    });
    socket.setTimeout(5000, () =>
      socket.destroy(new Error(`no TLS answer from port ${port} for ${servername}`)),
    );
    socket.on('error', reject);
  });
}

async function memoryOf(node: EdgeNode): Promise<{ rss: number; heapUsed: number; external: number }> {
  const response = await fetch(`http://127.0.0.1:${node.statsPort}/memory`);
  return (await response.json()) as { rss: number; heapUsed: number; external: number };
}

export async function runTlsSuite(config: BenchConfig, log: (line: string) => void): Promise<SuiteReport> {
  const work = mkdtempSync(join(tmpdir(), 'kennel-bench-tls-'));
  const cleanups: (() => Promise<void>)[] = [];
  try {
    const binary = buildLoadGenerator(work);
    const problems: string[] = [];
    const count = config.tlsCertificates;

    // Two stores: one certificate, and `count`. On PostgreSQL two edge nodes share the second.
    const location = async (name: string) => {
      if (config.postgresUrl === null) return join(work, `${name}.db`);
      const database = await createBenchDatabase(config.postgresUrl, `kennel_bench_tls_${name}`);
      cleanups.push(database.drop);
      return database.url;
    };
    const roots: Partial<Record<StoreKind, string>> = {};
    const seed =
      (hosts: number, kind: StoreKind) => async (platform: Awaited<ReturnType<typeof openPlatform>>) => {
        const now = new Date();
        const ca = await platform.store.internalCa(now);
        roots[kind] = ca.certificatePem;
        const issuer = new InternalIssuer(ca);
        const started = Date.now();
        let next = 1;
        // The realistic path: each certificate issued by the internal CA (its own P-256 key) and
        // saved through the certificate store (the key sealed), as the certificate job does.
        const worker = async () => {
          for (let i = next++; i <= hosts; i = next++) {
            const host = hostname(i);
            await platform.store.save(host, await issuer.issue(host), now);
          }
        };
        await Promise.all(Array.from({ length: 8 }, worker));
        log(
          `  ${hosts.toLocaleString('en-US')} certificates issued and stored in ${((Date.now() - started) / 1000).toFixed(1)} s`,
        );
      };
    log(`seeding the one-certificate store (${config.postgresUrl === null ? 'SQLite' : 'PostgreSQL'})`);
    const oneDb = await prepareEdgeDatabase({
      location: await location('one'),
      originUrl: 'http://127.0.0.1:9',
      seed: seed(1, 'one'),
    });
    log(`seeding the ${count.toLocaleString('en-US')}-certificate store`);
    const manyDb = await prepareEdgeDatabase({
      location: await location('many'),
      originUrl: 'http://127.0.0.1:9',
      seed: seed(count, 'many'),
    });

    const startNode = async (
      name: string,
      db: { location: string; sealingKey: string },
    ): Promise<EdgeNode> => {
      const httpsPort = await freePort();
      const statsPort = await freePort();
      const server = await startServer({
        name,
        node: config.node,
        args: [...START_FLAGS, '--expose-gc', join(ROOT, 'bench', 'edge-node.ts')],
        cwd: ROOT,
        cpu: config.serverCpu,
        port: await freePort(),
        env: {
          EDGE_DATABASE: db.location,
          EDGE_CERT_KEY: db.sealingKey,
          HTTPS_PORT: String(httpsPort),
          STATS_PORT: String(statsPort),
        },
        readyPath: '/',
      });
      cleanups.push(server.stop);
      return { server, httpsPort, statsPort };
    };
    const nodes: Record<StoreKind, EdgeNode> = {
      one: await startNode('edge, 1 certificate', oneDb),
      many: await startNode(`edge, ${count} certificates`, manyDb),
    };
    const nodeB = config.postgresUrl === null ? null : await startNode('edge node B', manyDb);

    const namesFile = (kind: StoreKind) => {
      const file = join(work, `${kind}.names`);
      const hosts = kind === 'one' ? 1 : count;
      writeFileSync(file, `${Array.from({ length: hosts }, (_, i) => hostname(i + 1)).join('\n')}\n`);
      return file;
    };
    const names: Record<StoreKind, string> = { one: namesFile('one'), many: namesFile('many') };

    // The right certificate, by SNI, on both nodes (first, middle and last name).
    for (const [kind, node] of Object.entries(nodes) as [StoreKind, EdgeNode][]) {
      const hosts = kind === 'one' ? [1] : [1, Math.ceil(count / 2), count];
      for (const i of hosts) {
        const answer = await handshakeOnce(node.httpsPort, hostname(i), { ca: roots[kind] as string });
        if (answer.subjectAltName !== `DNS:${hostname(i)}` || !answer.authorized) {
          throw new Error(
            `the edge with ${kind === 'one' ? 1 : count} certificates presented ${answer.subjectAltName || 'nothing'} (trusted: ${answer.authorized}) for ${hostname(i)}`,
          );
        }
      }
    }

    // The first pass: every certificate loaded from the database into the SNI cache.
    log(
      `first pass: ${count.toLocaleString('en-US')} full handshakes, one per name (certificates loaded from the database)`,
    );
    const cold = await runHandshakes(binary, config.loadCpu, {
      port: nodes.many.httpsPort,
      seconds: 1,
      workers: config.tlsClients,
      mode: 'once',
      namesFile: names.many,
    });
    if (cold.failed > 0) problems.push(`first pass: ${cold.failed} handshakes failed`);
    const coldRate = cold.full / cold.seconds;
    log(`  ${formatRate(coldRate)} handshakes/s (${cold.full} in ${cold.seconds.toFixed(2)} s)`);
    await runHandshakes(binary, config.loadCpu, {
      port: nodes.one.httpsPort,
      seconds: 1,
      workers: config.tlsClients,
      mode: 'once',
      namesFile: names.one,
    });
    const memory = { one: await memoryOf(nodes.one), many: await memoryOf(nodes.many) };
    log(
      `memory after a full GC: 1 certificate RSS ${mib(memory.one.rss)}, heap ${mib(memory.one.heapUsed)}; ${count} certificates RSS ${mib(memory.many.rss)}, heap ${mib(memory.many.heapUsed)}`,
    );

    // Resumption across nodes: a ticket from node A, offered to node B.
    const crossNode: { version: 'TLSv1.3' | 'TLSv1.2'; sameNode: boolean; otherNode: boolean | null }[] = [];
    for (const version of ['TLSv1.3', 'TLSv1.2'] as const) {
      const first = await handshakeOnce(nodes.many.httpsPort, hostname(2), {
        ca: roots.many as string,
        maxVersion: version,
      });
      const same = await handshakeOnce(nodes.many.httpsPort, hostname(2), {
        ca: roots.many as string,
        session: first.session,
        maxVersion: version,
      });
      const other = nodeB
        ? await handshakeOnce(nodeB.httpsPort, hostname(2), {
            ca: roots.many as string,
            session: first.session,
            maxVersion: version,
          })
        : null;
      // A resumed handshake carries no certificate: the session stands for the one presented first.
      crossNode.push({ version, sameNode: same.reused, otherNode: other ? other.reused : null });
    }
    log(
      `resumption: ${crossNode.map((c) => `${c.version} same node ${c.sameNode ? 'yes' : 'no'}, node B ${c.otherNode === null ? 'not run (needs PostgreSQL)' : c.otherNode ? 'yes' : 'no'}`).join('; ')}`,
    );

    const measure = async (
      round: number,
      store: StoreKind,
      mode: Mode,
      seconds: number,
    ): Promise<Measurement> => {
      const node = nodes[store];
      for (let attempt = 1; ; attempt++) {
        await waitForQuiet(config.noiseLimitCores, config.quietWaitSeconds * 1000, node.server.pid);
        let before = cpuSnapshot(node.server.pid);
        let run: HandshakeRun | null = null;
        let problem: string | null = null;
        try {
          run = await runHandshakes(
            binary,
            config.loadCpu,
            {
              port: node.httpsPort,
              seconds,
              workers: config.tlsClients,
              mode,
              namesFile: names[store],
            },
            () => {
              before = cpuSnapshot(node.server.pid);
            },
          );
        } catch (error) {
          problem = (error as Error).message;
        }
        const use = cpuUse(before, cpuSnapshot(node.server.pid));
        const done = run ? (mode === 'full' ? run.full : run.resumed) : 0;
        if (run && run.failed > 0) problem = `${run.failed} handshakes failed`;
        if (run && mode === 'resumed' && run.unresumed > 0)
          problem = `${run.unresumed} of ${run.unresumed + run.resumed} offered sessions were not resumed`;
        if (run && done === 0) problem ??= 'no handshake completed';
        const perSecond = run ? done / run.seconds : Number.NaN;
        const windowSeconds = (Date.now() - before.at) / 1000;
        const m: Measurement = {
          round,
          store,
          mode,
          perSecond,
          serverUs: done > 0 ? (use.serverSeconds * 1e6) / done : Number.NaN,
          serverCores: use.serverSeconds / windowSeconds,
          otherCores: use.otherCores,
          stealCores: use.stealCores,
          attempts: attempt,
          problem,
        };
        if (problem || !(m.otherCores > config.noiseLimitCores) || attempt > config.retries) return m;
        log(`  ${label(store, count)}, ${mode}: other CPU ${m.otherCores.toFixed(2)}; measuring again`);
      }
    };

    if (config.warmupSeconds > 0) {
      log(`warm-up: ${config.warmupSeconds} s per store and mode`);
      for (const store of ['one', 'many'] as const)
        for (const mode of ['full', 'resumed'] as const) {
          const m = await measure(0, store, mode, config.warmupSeconds);
          if (m.problem) problems.push(`warm-up, ${label(store, count)}, ${mode}: ${m.problem}`);
        }
    }
    const measurements: Measurement[] = [];
    const stores: StoreKind[] = ['one', 'many'];
    for (let round = 1; round <= config.rounds; round++) {
      for (const mode of ['full', 'resumed'] as const) {
        const order = round % 2 === 1 ? stores : [...stores].reverse();
        for (const store of order) {
          const m = await measure(round, store, mode, config.durationSeconds);
          measurements.push(m);
          log(
            `round ${round}/${config.rounds}  ${mode.padEnd(7)}  ${label(store, count).padEnd(18)}  ${formatRate(m.perSecond).padStart(6)} handshakes/s  server ${m.serverUs.toFixed(0)} µs/handshake, ${m.serverCores.toFixed(2)} cores  other CPU ${m.otherCores.toFixed(2)}${m.problem ? `  FAILED: ${m.problem}` : ''}`,
          );
          if (m.problem) problems.push(`round ${round}, ${label(store, count)}, ${mode}: ${m.problem}`);
        }
      }
    }
    return summarize(config, measurements, problems, { count, coldRate, cold, memory, crossNode });
  } finally {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((error: Error) => log(`cleanup failed: ${error.message}`));
    }
    rmSync(work, { recursive: true, force: true });
  }
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const label = (store: StoreKind, count: number) =>
  store === 'one' ? '1 certificate' : `${count.toLocaleString('en-US')} certificates`;

function summarize(
  config: BenchConfig,
  measurements: readonly Measurement[],
  problems: readonly string[],
  extra: {
    count: number;
    coldRate: number;
    cold: HandshakeRun;
    memory: Record<StoreKind, { rss: number; heapUsed: number; external: number }>;
    crossNode: readonly { version: string; sameNode: boolean; otherNode: boolean | null }[];
  },
): SuiteReport {
  const stats = (store: StoreKind, mode: Mode) => {
    const clean = measurements.filter((m) => m.store === store && m.mode === mode && !m.problem);
    const rates = clean.map((m) => m.perSecond);
    return {
      rounds: clean.length,
      perSecond: median(rates),
      serverUs: median(clean.map((m) => m.serverUs)),
      serverCores: median(clean.map((m) => m.serverCores)),
      min: Math.min(...rates),
      max: Math.max(...rates),
      otherCores: Math.max(...clean.map((m) => m.otherCores)),
    };
  };
  const figures: Record<string, unknown> = {};
  const rows: string[][] = [];
  for (const mode of ['full', 'resumed'] as const) {
    const base = stats('one', mode).perSecond;
    for (const store of ['one', 'many'] as const) {
      const s = stats(store, mode);
      figures[`${store}.${mode}`] = { ...s, vsOne: s.perSecond / base };
      rows.push([
        mode,
        label(store, extra.count),
        formatRate(s.perSecond),
        store === 'one' ? '100%' : formatRatio(s.perSecond / base),
        Number.isFinite(s.serverUs) ? `${s.serverUs.toFixed(0)} µs` : '-',
        Number.isFinite(s.serverCores) ? s.serverCores.toFixed(2) : '-',
        s.rounds === 0 ? '-' : `${formatRate(s.min)}–${formatRate(s.max)}`,
        `${s.rounds}/${config.rounds}`,
        Number.isFinite(s.otherCores) ? s.otherCores.toFixed(2) : '-',
      ]);
    }
  }
  const { memory, count } = extra;
  const memoryRows = (['one', 'many'] as const).map((store) => [
    label(store, count),
    mib(memory[store].rss),
    mib(memory[store].heapUsed),
    mib(memory[store].external),
    store === 'one' ? '-' : `${((memory.many.rss - memory.one.rss) / 1024 / (count - 1)).toFixed(1)} KiB`,
  ]);
  const ratio = (mode: Mode) => stats('many', mode).perSecond / stats('one', mode).perSecond;
  // Edge CPU per handshake, steadier than the rate when the machine is busy.
  const cpuRatio = (mode: Mode) => stats('one', mode).serverUs / stats('many', mode).serverUs;
  const versus = (mode: Mode) =>
    `${formatRatio(ratio(mode))} (${formatRate(stats('many', mode).perSecond)} vs ${formatRate(stats('one', mode).perSecond)}/s); by edge CPU per handshake ${formatRatio(cpuRatio(mode))}`;
  const tls13 = extra.crossNode.find((c) => c.version === 'TLSv1.3');
  const tls12 = extra.crossNode.find((c) => c.version === 'TLSv1.2');
  const describeResume = (c: typeof tls13) =>
    c
      ? `same node ${c.sameNode ? 'resumed' : 'not resumed'}, node B ${c.otherNode === null ? 'not run (BENCH_POSTGRES_URL=off: two nodes need PostgreSQL)' : c.otherNode ? 'resumed' : 'not resumed'}`
      : '-';
  const checks: Check[] = [
    {
      label: `full handshakes/s with ${count.toLocaleString('en-US')} certificates >= 90% of with 1`,
      passed: ratio('full') >= 0.9,
      measured: versus('full'),
    },
    {
      label: `resumed handshakes/s with ${count.toLocaleString('en-US')} certificates >= 90% of with 1`,
      passed: ratio('resumed') >= 0.9,
      measured: versus('resumed'),
    },
    {
      label: 'a TLS 1.3 session from edge node A resumes on node B (shared ticket keys)',
      passed: tls13?.otherNode === true,
      measured: describeResume(tls13),
    },
    {
      label: 'a TLS 1.2 session from edge node A resumes on node B',
      passed: tls12?.otherNode === true,
      measured: describeResume(tls12),
    },
  ];
  const warnings = measurements.flatMap((m) =>
    disturbanceNotes(config, `round ${m.round}, ${label(m.store, count)}, ${m.mode}`, m),
  );
  return {
    suite: 'tls',
    title: `TLS 1.3 handshakes (ECDSA P-256 certificates from the internal CA), edge on CPU ${config.serverCpu}, ${config.tlsClients} client processes on CPU ${config.loadCpu}, medians of ${config.rounds} rounds x ${config.durationSeconds} s; first pass over ${count.toLocaleString('en-US')} names (loading each from the database): ${formatRate(extra.coldRate)}/s`,
    table: {
      headers: [
        'Handshake',
        'Store',
        'per second',
        'vs 1 certificate',
        'edge CPU/handshake',
        'edge cores',
        'range',
        'rounds',
        'other CPU',
      ],
      rows,
      right: [2, 3, 4, 5, 6, 8],
    },
    moreTables: [
      {
        title: 'Edge memory after every certificate was served once, after a full GC',
        table: {
          headers: ['Store', 'RSS', 'heap used', 'external', 'RSS per extra certificate'],
          rows: memoryRows,
          right: [1, 2, 3, 4],
        },
      },
    ],
    checks,
    problems,
    warnings,
    data: { figures, measurements, ...extra },
  };
}
