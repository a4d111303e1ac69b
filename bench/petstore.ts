import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  AUTHORIZATION,
  BENCH_KEY,
  bareResponses,
  captureAnswers,
  type EndpointKey,
  expectSameAnswers,
  expectSameBodies,
  MAX_STOCK,
  readStock,
  seedPetstore,
  setStock,
} from './petstore-fixtures.ts';
import type { BenchConfig } from './support/config.ts';
import { disturbanceNotes, measureRun, type RunFigures } from './support/measure.ts';
import { createBenchDatabase } from './support/postgres.ts';
import {
  type Check,
  formatMs,
  formatRate,
  formatRatio,
  median,
  type Suite,
  type SuiteReport,
} from './support/report.ts';
import { freePort, type RunningServer, startServer } from './support/servers.ts';

/**
 * The Petstore API under load (issues 2 and 16): GET /pets/{petId}, GET /pets (a 20-item page),
 * GET /store/inventory/{petId} (with a key) and POST /store/orders (a transaction reserving
 * stock), on SQLite and on PostgreSQL, against two anchors: a bare node:http server answering the
 * same bytes, and a minimal node:http + pg service doing the same database work with no framework
 * (bench/minimal-pg-server.ts). Each database also runs `open` (authentication and rate limiting
 * off) to price the guard, and PostgreSQL runs two Petstore nodes at once on the one database.
 * Endpoints and servers are interleaved round by round (the order of servers rotating) so drift
 * on the machine spreads over all of them; the table gives medians of the rounds.
 */
export const petstoreSuite: Suite = {
  name: 'petstore',
  description:
    'Petstore API (SQLite, PostgreSQL, two nodes) against bare node:http and minimal node:http + pg',
  run: runPetstoreSuite,
};

const ROOT = resolve(import.meta.dirname, '..');

/**
 * `open`, `postgres-open`: the Petstore with authentication and rate limiting off, to price them.
 * `minimal`: node:http + pg on the PostgreSQL Petstore's database. `two-nodes`: the PostgreSQL
 * Petstore and a second process on the same database, loaded at once.
 */
type TargetKind = 'bare' | 'sqlite' | 'open' | 'minimal' | 'postgres' | 'postgres-open' | 'two-nodes';

interface Target {
  readonly kind: TargetKind;
  readonly label: string;
  readonly server: RunningServer;
  /** Further nodes loaded at the same time (the two-node run). */
  readonly moreNodes?: readonly RunningServer[];
  /** Where stock is set and read around order runs (a Petstore on the same database). */
  readonly stockUrl?: string;
}

interface Endpoint {
  readonly key: EndpointKey;
  readonly label: string;
  readonly path: string;
  /** wrk Lua script for requests other than a plain GET. */
  readonly script?: string;
  /** The targets that run it. */
  readonly targets: readonly TargetKind[];
}

const POSTGRES_KINDS: readonly TargetKind[] = ['minimal', 'postgres', 'postgres-open', 'two-nodes'];

/** The Petstore with authentication and rate limiting off: what the guard is priced against. */
const OPEN = { PETSTORE_AUTHENTICATION: 'off', PETSTORE_RATE_LIMIT: 'off' };

interface Measurement extends RunFigures {
  /** 0 for the warm-up. */
  readonly round: number;
  readonly target: TargetKind;
  readonly endpoint: EndpointKey;
}

export async function runPetstoreSuite(
  config: BenchConfig,
  log: (line: string) => void,
): Promise<SuiteReport> {
  const work = mkdtempSync(join(tmpdir(), 'kennel-bench-'));
  const cleanups: (() => Promise<void>)[] = [];
  try {
    const targets: Target[] = [];
    const problems: string[] = [];

    log('starting the Petstore on SQLite');
    const sqlite = await startPetstore(config, 'Petstore (SQLite)', {
      DATA_DIR: join(work, 'sqlite'),
      DATABASE_URL: '',
    });
    cleanups.push(sqlite.stop);
    const seed = await seedPetstore(sqlite.url);
    const reference = await captureAnswers(sqlite.url, seed);
    targets.push({ kind: 'sqlite', label: 'Petstore, SQLite', server: sqlite });

    log('starting the Petstore on SQLite with authentication and rate limiting off');
    const open = await startPetstore(config, 'Petstore (SQLite, no auth, no rate limit)', {
      DATA_DIR: join(work, 'open'),
      DATABASE_URL: '',
      ...OPEN,
    });
    cleanups.push(open.stop);
    await seedPetstore(open.url);
    targets.push({ kind: 'open', label: 'Petstore, SQLite, open', server: open });

    if (config.postgresUrl !== null) {
      // Every PostgreSQL target works on this one database, seeded once through the first node.
      const database = await createBenchDatabase(config.postgresUrl, 'kennel_bench');
      cleanups.push(database.drop);
      log(`starting the Petstore on PostgreSQL (database ${database.name})`);
      const pgEnv = { DATABASE_URL: database.url };
      const postgres = await startPetstore(config, 'Petstore (PostgreSQL)', pgEnv);
      cleanups.push(postgres.stop);
      await seedPetstore(postgres.url);
      await expectSameAnswers(postgres.url, reference, 'the Petstore on PostgreSQL');
      const stockUrl = postgres.url;
      targets.push({ kind: 'postgres', label: 'Petstore, PostgreSQL', server: postgres, stockUrl });

      log('starting the Petstore on PostgreSQL with authentication and rate limiting off');
      const pgOpen = await startPetstore(config, 'Petstore (PostgreSQL, no auth, no rate limit)', {
        ...pgEnv,
        ...OPEN,
      });
      cleanups.push(pgOpen.stop);
      targets.push({ kind: 'postgres-open', label: 'Petstore, PostgreSQL, open', server: pgOpen, stockUrl });

      log('starting a second Petstore node on the same PostgreSQL database');
      const second = await startPetstore(config, 'Petstore (PostgreSQL, node 2)', pgEnv);
      cleanups.push(second.stop);
      await expectSameAnswers(second.url, reference, 'the second PostgreSQL node');
      targets.push({
        kind: 'two-nodes',
        label: 'Petstore, PostgreSQL, 2 nodes',
        server: postgres,
        moreNodes: [second],
        stockUrl,
      });

      log('starting the minimal node:http + pg service on the same database');
      const minimal = await startServer({
        name: 'minimal node:http + pg service',
        node: config.node,
        args: [join(ROOT, 'bench', 'minimal-pg-server.ts')],
        cwd: ROOT,
        cpu: config.serverCpu,
        port: await freePort(),
        env: { DATABASE_URL: database.url },
        readyPath: '/',
      });
      cleanups.push(minimal.stop);
      await expectSameBodies(minimal.url, reference, 'the minimal PostgreSQL service', [
        'getPet',
        'listPets',
      ]);
      targets.push({ kind: 'minimal', label: 'minimal node:http + pg', server: minimal, stockUrl });
    } else {
      log('PostgreSQL left out (BENCH_POSTGRES_URL=off)');
    }

    log('starting the bare node:http server');
    const responsesFile = join(work, 'bare-responses.json');
    writeFileSync(responsesFile, JSON.stringify(bareResponses(reference)));
    const bare = await startServer({
      name: 'bare node:http server',
      node: config.node,
      args: [join(ROOT, 'bench', 'bare-server.ts')],
      cwd: ROOT,
      cpu: config.serverCpu,
      port: await freePort(),
      env: { BARE_RESPONSES: responsesFile },
      readyPath: '/',
    });
    cleanups.push(bare.stop);
    await expectSameAnswers(bare.url, reference, 'the bare server');
    targets.unshift({ kind: 'bare', label: 'bare node:http', server: bare });

    // Public reads go without a key (limited per client address); the store's operations send
    // the key, so they pay for its lookup, the per-key limit and the scope check.
    const endpoints: Endpoint[] = [
      {
        key: 'getPet',
        label: 'GET /pets/{petId}',
        path: `/pets/${seed.getPetId}`,
        targets: ['bare', 'sqlite', 'open', 'minimal', 'postgres', 'postgres-open', 'two-nodes'],
      },
      {
        key: 'listPets',
        label: 'GET /pets',
        path: '/pets',
        targets: ['bare', 'sqlite', 'minimal', 'postgres'],
      },
      {
        key: 'getInventory',
        label: 'GET /store/inventory/{petId} (key)',
        path: `/store/inventory/${seed.getPetId}`,
        script: writeRequestScript(work, 'get-inventory', 'GET'),
        targets: ['bare', 'sqlite', 'open', 'postgres', 'postgres-open'],
      },
      {
        key: 'placeOrder',
        label: 'POST /store/orders (key)',
        path: '/store/orders',
        script: writeRequestScript(work, 'place-order', 'POST', { petId: seed.orderPetId, quantity: 1 }),
        targets: ['bare', 'sqlite', 'minimal', 'postgres', 'two-nodes'],
      },
    ];
    const runs = (endpoint: Endpoint, target: Target) => endpoint.targets.includes(target.kind);

    const measure = async (round: number, target: Target, endpoint: Endpoint, seconds: number) => {
      const stockUrl = target.stockUrl ?? target.server.url;
      const ordersWithStock = endpoint.key === 'placeOrder' && target.kind !== 'bare';
      const figures = await measureRun(
        config,
        {
          server: target.server,
          moreNodes: target.moreNodes,
          path: endpoint.path,
          script: endpoint.script,
          seconds,
          databaseNames: POSTGRES_KINDS.includes(target.kind) ? ['postgres'] : [],
          // Full stock before each order run, so no order is refused for want of stock; afterwards
          // every answered order must have taken its unit.
          prepare: ordersWithStock ? () => setStock(stockUrl, seed.orderPetId, MAX_STOCK) : undefined,
          verify: ordersWithStock
            ? async ({ requests }) => {
                const placed = MAX_STOCK - (await readStock(stockUrl, seed.orderPetId));
                return placed < requests
                  ? `${requests} orders answered but only ${placed} units left the stock`
                  : null;
              }
            : undefined,
        },
        (disturbed) => log(`  ${target.label}, ${endpoint.label}: ${describe(disturbed)}; measuring again`),
      );
      return { ...figures, round, target: target.kind, endpoint: endpoint.key } satisfies Measurement;
    };

    if (config.warmupSeconds > 0) {
      log(`warm-up: ${config.warmupSeconds} s per server and endpoint`);
      for (const endpoint of endpoints) {
        for (const target of targets.filter((t) => runs(endpoint, t))) {
          const m = await measure(0, target, endpoint, config.warmupSeconds);
          if (m.problem) problems.push(`warm-up, ${target.label}, ${endpoint.label}: ${m.problem}`);
        }
      }
    }

    const measurements: Measurement[] = [];
    for (let round = 1; round <= config.rounds; round++) {
      for (const endpoint of endpoints) {
        // Rotate the order each round so no server always runs first (or right after another).
        const order = targets
          .map((_, i) => targets[(i + round - 1) % targets.length] as Target)
          .filter((t) => runs(endpoint, t));
        for (const target of order) {
          const m = await measure(round, target, endpoint, config.durationSeconds);
          measurements.push(m);
          log(
            `round ${round}/${config.rounds}  ${endpoint.label.padEnd(18)}  ${target.label.padEnd(29)}  ${describe(m)}`,
          );
          if (m.problem) problems.push(`round ${round}, ${target.label}, ${endpoint.label}: ${m.problem}`);
        }
      }
    }

    // The GET answers must still be the bytes the bare server copied (the open servers send no
    // rate-limit headers, the minimal service only the bodies).
    const reads: EndpointKey[] = ['getPet', 'listPets', 'getInventory'];
    for (const target of targets) {
      const servers = [target.server, ...(target.moreNodes ?? [])];
      for (const server of servers) {
        const checked =
          target.kind === 'minimal'
            ? expectSameBodies(server.url, reference, target.label, ['getPet', 'listPets'])
            : target.kind === 'open' || target.kind === 'postgres-open'
              ? expectSameBodies(server.url, reference, target.label, reads)
              : expectSameAnswers(server.url, reference, target.label, reads);
        await checked.catch((error: Error) => problems.push(error.message));
      }
    }

    return summarize(config, targets, endpoints, measurements, problems);
  } finally {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((error: Error) => log(`cleanup failed: ${error.message}`));
    }
    rmSync(work, { recursive: true, force: true });
  }
}

function describe(m: RunFigures): string {
  const database = m.databaseUsPerRequest > 0 ? ` + ${m.databaseUsPerRequest.toFixed(0)} µs PostgreSQL` : '';
  return [
    `${formatRate(m.requestsPerSecond).padStart(7)} req/s`,
    `p99 ${formatMs(m.p99Ms).padStart(9)}`,
    `CPU ${m.serverUsPerRequest.toFixed(1)} µs/req${database}`,
    `other CPU ${m.otherCores.toFixed(2)}`,
    ...(m.problem ? [`FAILED: ${m.problem}`] : []),
  ].join('  ');
}

function summarize(
  config: BenchConfig,
  targets: readonly Target[],
  endpoints: readonly Endpoint[],
  measurements: readonly Measurement[],
  problems: readonly string[],
): SuiteReport {
  const stats = (target: TargetKind, endpoint: EndpointKey) => {
    const clean = measurements.filter((m) => m.target === target && m.endpoint === endpoint && !m.problem);
    const rates = clean.map((m) => m.requestsPerSecond);
    return {
      rounds: clean.length,
      requestsPerSecond: median(rates),
      p99Ms: median(clean.map((m) => m.p99Ms)),
      serverUsPerRequest: median(clean.map((m) => m.serverUsPerRequest)),
      databaseUsPerRequest: median(clean.map((m) => m.databaseUsPerRequest)),
      min: Math.min(...rates),
      max: Math.max(...rates),
      otherCores: Math.max(...clean.map((m) => m.otherCores)),
    };
  };
  const rate = (target: TargetKind, endpoint: EndpointKey) => stats(target, endpoint).requestsPerSecond;
  const bareGet = rate('bare', 'getPet');
  const rows: string[][] = [];
  const figures: Record<string, Record<string, unknown>> = {};
  for (const endpoint of endpoints) {
    const bare = rate('bare', endpoint.key);
    const minimal = rate('minimal', endpoint.key);
    for (const target of targets.filter((t) => endpoint.targets.includes(t.kind))) {
      const s = stats(target.kind, endpoint.key);
      const vsBare = s.requestsPerSecond / bare;
      const vsMinimal = POSTGRES_KINDS.includes(target.kind) ? s.requestsPerSecond / minimal : Number.NaN;
      figures[endpoint.key] = { ...figures[endpoint.key], [target.kind]: { ...s, vsBare, vsMinimal } };
      const cpu = Number.isFinite(s.serverUsPerRequest) ? `${s.serverUsPerRequest.toFixed(1)} µs` : '-';
      rows.push([
        endpoint.label,
        target.label,
        formatRate(s.requestsPerSecond),
        formatMs(s.p99Ms),
        target.kind === 'bare' ? '100%' : formatRatio(vsBare),
        target.kind === 'minimal' ? '100%' : formatRatio(vsMinimal),
        POSTGRES_KINDS.includes(target.kind) ? `${cpu} + ${s.databaseUsPerRequest.toFixed(1)} µs` : cpu,
        s.rounds === 0 ? '-' : `${formatRate(s.min)}–${formatRate(s.max)}`,
        `${s.rounds}/${config.rounds}`,
        Number.isFinite(s.otherCores) ? s.otherCores.toFixed(2) : '-',
      ]);
    }
  }

  const ratio = (measured: number, anchor: number, anchorName: string) =>
    `${formatRatio(measured / anchor)} (${formatRate(measured)} vs ${formatRate(anchor)} req/s ${anchorName})`;
  /** `target` on `endpoint` against an anchor on the same endpoint. */
  const against = (
    label: string,
    target: TargetKind,
    anchor: TargetKind,
    endpoint: EndpointKey,
    min: number,
  ): Check => {
    const measured = rate(target, endpoint);
    const base = rate(anchor, endpoint);
    return {
      label,
      passed: measured / base >= min,
      measured: ratio(measured, base, anchor === 'bare' ? 'bare' : anchor === 'minimal' ? 'minimal' : 'open'),
    };
  };
  const p99Below = (label: string, target: TargetKind, endpoint: EndpointKey, ms: number): Check => {
    const p99 = stats(target, endpoint).p99Ms;
    return { label, passed: p99 < ms, measured: formatMs(p99) };
  };
  const sqliteOrders = rate('sqlite', 'placeOrder');
  const checks: Check[] = [
    against('SQLite GET /pets/{petId} >= 70% of the bare server', 'sqlite', 'bare', 'getPet', 0.7),
    p99Below('SQLite GET /pets/{petId} p99 < 5 ms', 'sqlite', 'getPet', 5),
    against('SQLite GET /pets (20 pets) >= 40% of the bare server', 'sqlite', 'bare', 'listPets', 0.4),
    against(
      'SQLite GET /store/inventory/{petId} with a key >= 55% of the bare server',
      'sqlite',
      'bare',
      'getInventory',
      0.55,
    ),
    {
      label: "SQLite POST /store/orders >= 25% of the bare server's GET /pets/{petId}",
      passed: sqliteOrders / bareGet >= 0.25,
      measured: ratio(sqliteOrders, bareGet, 'bare GET /pets/{petId}'),
    },
    p99Below('SQLite POST /store/orders p99 < 10 ms', 'sqlite', 'placeOrder', 10),
    // The price of authentication plus rate limiting: the same Petstore with both off.
    against(
      'GET /store/inventory/{petId} with a key: with auth + rate limit >= 85% of without (SQLite)',
      'sqlite',
      'open',
      'getInventory',
      0.85,
    ),
    against(
      'GET /pets/{petId} without a key: with rate limit (per address) >= 85% of without (SQLite)',
      'sqlite',
      'open',
      'getPet',
      0.85,
    ),
  ];
  if (config.postgresUrl !== null) {
    const minimalOrders = rate('minimal', 'placeOrder');
    /** Orders of `target` as a multiple of the minimal service's. */
    const timesMinimal = (label: string, target: TargetKind, min: number): Check => {
      const orders = rate(target, 'placeOrder');
      return {
        label,
        passed: orders / minimalOrders >= min,
        measured: `${(orders / minimalOrders).toFixed(2)}x (${formatRate(orders)} vs ${formatRate(minimalOrders)} req/s minimal)`,
      };
    };
    checks.push(
      against(
        'PostgreSQL GET /pets/{petId} >= 90% of the minimal node:http + pg read',
        'postgres',
        'minimal',
        'getPet',
        0.9,
      ),
      p99Below('PostgreSQL GET /pets/{petId} p99 < 10 ms', 'postgres', 'getPet', 10),
      against(
        'PostgreSQL GET /pets (20 pets) >= 60% of the minimal 20-row read',
        'postgres',
        'minimal',
        'listPets',
        0.6,
      ),
      timesMinimal(
        'PostgreSQL POST /store/orders >= 3x the minimal per-request order transaction',
        'postgres',
        3,
      ),
      p99Below('PostgreSQL POST /store/orders p99 < 25 ms', 'postgres', 'placeOrder', 25),
      against(
        'GET /store/inventory/{petId} with a key: with auth + rate limit >= 85% of without (PostgreSQL)',
        'postgres',
        'postgres-open',
        'getInventory',
        0.85,
      ),
      against(
        'GET /pets/{petId} without a key: with rate limit (per address) >= 85% of without (PostgreSQL)',
        'postgres',
        'postgres-open',
        'getPet',
        0.85,
      ),
      // The throughput targets across nodes: both nodes' answers together, against the same anchor.
      against(
        'Two PostgreSQL nodes: GET /pets/{petId} combined >= 90% of the minimal read',
        'two-nodes',
        'minimal',
        'getPet',
        0.9,
      ),
      timesMinimal(
        'Two PostgreSQL nodes: POST /store/orders combined >= 3x the minimal order transaction',
        'two-nodes',
        3,
      ),
    );
  }

  const labelOf = (kind: TargetKind) => targets.find((t) => t.kind === kind)?.label ?? kind;
  const endpointOf = (key: EndpointKey) => endpoints.find((e) => e.key === key)?.label ?? key;
  const warnings = measurements.flatMap((m) =>
    disturbanceNotes(config, `round ${m.round}, ${labelOf(m.target)}, ${endpointOf(m.endpoint)}`, m),
  );

  const twoNodes = (endpoint: EndpointKey) => ({
    oneNode: rate('postgres', endpoint),
    twoNodes: rate('two-nodes', endpoint),
    p99Ms: stats('two-nodes', endpoint).p99Ms,
  });
  return {
    suite: 'petstore',
    title: `Petstore API: ${config.connections} connections, medians of ${config.rounds} rounds x ${config.durationSeconds} s`,
    table: {
      headers: [
        'Endpoint',
        'Server',
        'req/s',
        'p99',
        'vs bare',
        'vs minimal pg',
        'CPU/req',
        'req/s range',
        'rounds',
        'other CPU',
      ],
      rows,
      right: [2, 3, 4, 5, 6, 7, 9],
    },
    checks,
    problems,
    warnings,
    data: {
      figures,
      measurements,
      guard: Object.fromEntries(
        (['sqlite', 'postgres'] as const).map((kind) => {
          const open = kind === 'sqlite' ? 'open' : 'postgres-open';
          const pair = (endpoint: EndpointKey) => ({
            with: rate(kind, endpoint),
            without: rate(open, endpoint),
            ratio: rate(kind, endpoint) / rate(open, endpoint),
          });
          return [kind, { getInventory: pair('getInventory'), getPet: pair('getPet') }];
        }),
      ),
      twoNodes: { getPet: twoNodes('getPet'), placeOrder: twoNodes('placeOrder') },
    },
  };
}

async function startPetstore(
  config: BenchConfig,
  name: string,
  env: Record<string, string>,
): Promise<RunningServer> {
  return startServer({
    name,
    node: config.node,
    args: [join(ROOT, 'src', 'main', 'petstore.ts')],
    cwd: ROOT,
    cpu: config.serverCpu,
    port: await freePort(),
    env: {
      // Limits high enough never to refuse the load: the limiter still counts every request.
      PETSTORE_ADMIN_KEY: BENCH_KEY,
      PETSTORE_RATE_LIMIT_PER_KEY: '100000000',
      PETSTORE_RATE_LIMIT_PER_ADDRESS: '100000000',
      ...env,
      LOG_LEVEL: 'silent',
    },
    readyPath: '/openapi.json',
  });
}

/** A wrk Lua script sending `method` with the bench key (and a JSON body); returns its path. */
function writeRequestScript(dir: string, name: string, method: string, body?: unknown): string {
  const path = join(dir, `${name}.lua`);
  const lua = (text: string) => `"${text.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
  writeFileSync(
    path,
    [
      `wrk.method = ${lua(method)}`,
      `wrk.headers["Authorization"] = ${lua(AUTHORIZATION)}`,
      ...(body === undefined
        ? []
        : [`wrk.body = ${lua(JSON.stringify(body))}`, 'wrk.headers["Content-Type"] = "application/json"']),
      '',
    ].join('\n'),
  );
  return path;
}
