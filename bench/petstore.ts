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
 * The Petstore API under load (issue 2): GET /pets/{petId}, GET /pets (a 20-item page) and
 * POST /store/orders (a transaction reserving stock), on SQLite and on PostgreSQL, against a bare
 * node:http server answering the same bytes. Endpoints and servers are interleaved round by round
 * (the order of servers rotating) so drift on the machine spreads over all of them; the table
 * gives medians of the rounds.
 */
export const petstoreSuite: Suite = {
  name: 'petstore',
  description: 'Petstore API (SQLite, PostgreSQL) against a bare node:http server',
  run: runPetstoreSuite,
};

const ROOT = resolve(import.meta.dirname, '..');

/** `open`: the SQLite Petstore with authentication and rate limiting off, to price them. */
type TargetKind = 'bare' | 'sqlite' | 'postgres' | 'open';

interface Target {
  readonly kind: TargetKind;
  readonly label: string;
  readonly server: RunningServer;
}

interface Endpoint {
  readonly key: EndpointKey;
  readonly label: string;
  readonly path: string;
  /** wrk Lua script for requests other than a plain GET. */
  readonly script?: string;
  /** The targets that run it, when not every one. */
  readonly targets?: readonly TargetKind[];
}

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

    if (config.postgresUrl !== null) {
      const database = await createBenchDatabase(config.postgresUrl, 'kennel_bench');
      cleanups.push(database.drop);
      log(`starting the Petstore on PostgreSQL (database ${database.name})`);
      const postgres = await startPetstore(config, 'Petstore (PostgreSQL)', { DATABASE_URL: database.url });
      cleanups.push(postgres.stop);
      await seedPetstore(postgres.url);
      await expectSameAnswers(postgres.url, reference, 'the Petstore on PostgreSQL');
      targets.push({ kind: 'postgres', label: 'Petstore, PostgreSQL', server: postgres });
    } else {
      log('PostgreSQL left out (BENCH_POSTGRES_URL=off)');
    }

    log('starting the Petstore on SQLite with authentication and rate limiting off');
    const open = await startPetstore(config, 'Petstore (SQLite, no auth, no rate limit)', {
      DATA_DIR: join(work, 'open'),
      DATABASE_URL: '',
      PETSTORE_AUTHENTICATION: 'off',
      PETSTORE_RATE_LIMIT: 'off',
    });
    cleanups.push(open.stop);
    await seedPetstore(open.url);
    targets.push({ kind: 'open', label: 'Petstore, SQLite, open', server: open });

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
      { key: 'getPet', label: 'GET /pets/{petId}', path: `/pets/${seed.getPetId}` },
      { key: 'listPets', label: 'GET /pets', path: '/pets', targets: ['bare', 'sqlite', 'postgres'] },
      {
        key: 'getInventory',
        label: 'GET /store/inventory/{petId} (key)',
        path: `/store/inventory/${seed.getPetId}`,
        script: writeRequestScript(work, 'get-inventory', 'GET'),
      },
      {
        key: 'placeOrder',
        label: 'POST /store/orders (key)',
        path: '/store/orders',
        script: writeRequestScript(work, 'place-order', 'POST', { petId: seed.orderPetId, quantity: 1 }),
        targets: ['bare', 'sqlite', 'postgres'],
      },
    ];
    const runs = (endpoint: Endpoint, target: Target) =>
      endpoint.targets === undefined || endpoint.targets.includes(target.kind);

    const measure = async (round: number, target: Target, endpoint: Endpoint, seconds: number) => {
      const url = target.server.url;
      const ordersOnPetstore = endpoint.key === 'placeOrder' && target.kind !== 'bare';
      const figures = await measureRun(
        config,
        {
          server: target.server,
          path: endpoint.path,
          script: endpoint.script,
          seconds,
          databaseNames: target.kind === 'postgres' ? ['postgres'] : [],
          // Full stock before each order run, so no order is refused for want of stock; afterwards
          // every answered order must have taken its unit.
          prepare: ordersOnPetstore ? () => setStock(url, seed.orderPetId, MAX_STOCK) : undefined,
          verify: ordersOnPetstore
            ? async ({ requests }) => {
                const placed = MAX_STOCK - (await readStock(url, seed.orderPetId));
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
            `round ${round}/${config.rounds}  ${endpoint.label.padEnd(18)}  ${target.label.padEnd(20)}  ${describe(m)}`,
          );
          if (m.problem) problems.push(`round ${round}, ${target.label}, ${endpoint.label}: ${m.problem}`);
        }
      }
    }

    // The GET answers must still be the bytes the bare server copied.
    for (const target of targets.filter((t) => t.kind !== 'open')) {
      await expectSameAnswers(target.server.url, reference, target.label, [
        'getPet',
        'listPets',
        'getInventory',
      ]).catch((error: Error) => problems.push(error.message));
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
  const bareGet = stats('bare', 'getPet').requestsPerSecond;
  const rows: string[][] = [];
  const figures: Record<string, Record<string, unknown>> = {};
  for (const endpoint of endpoints) {
    const bare = stats('bare', endpoint.key).requestsPerSecond;
    for (const target of targets.filter(
      (t) => endpoint.targets === undefined || endpoint.targets.includes(t.kind),
    )) {
      const s = stats(target.kind, endpoint.key);
      const vsBare = s.requestsPerSecond / bare;
      const vsBareGetPet = s.requestsPerSecond / bareGet;
      figures[endpoint.key] = { ...figures[endpoint.key], [target.kind]: { ...s, vsBare, vsBareGetPet } };
      const cpu = Number.isFinite(s.serverUsPerRequest) ? `${s.serverUsPerRequest.toFixed(1)} µs` : '-';
      rows.push([
        endpoint.label,
        target.label,
        formatRate(s.requestsPerSecond),
        formatMs(s.p99Ms),
        target.kind === 'bare' ? '100%' : formatRatio(vsBare),
        formatRatio(vsBareGetPet),
        target.kind === 'postgres' ? `${cpu} + ${s.databaseUsPerRequest.toFixed(1)} µs` : cpu,
        s.rounds === 0 ? '-' : `${formatRate(s.min)}–${formatRate(s.max)}`,
        `${s.rounds}/${config.rounds}`,
        Number.isFinite(s.otherCores) ? s.otherCores.toFixed(2) : '-',
      ]);
    }
  }

  const sqliteGet = stats('sqlite', 'getPet');
  const sqliteOrder = stats('sqlite', 'placeOrder');
  const versus = (rps: number) =>
    `${formatRatio(rps / bareGet)} (${formatRate(rps)} vs ${formatRate(bareGet)} req/s)`;
  // The price of authentication plus rate limiting: the same SQLite Petstore with both off.
  const guardedInventory = stats('sqlite', 'getInventory').requestsPerSecond;
  const openInventory = stats('open', 'getInventory').requestsPerSecond;
  const guardedGet = sqliteGet.requestsPerSecond;
  const openGet = stats('open', 'getPet').requestsPerSecond;
  const guardRatio = (guarded: number, open: number) =>
    `${formatRatio(guarded / open)} (${formatRate(guarded)} vs ${formatRate(open)} req/s)`;
  const checks: Check[] = [
    {
      label: 'GET /store/inventory/{petId} with a key: with auth + rate limit >= 85% of without (SQLite)',
      passed: guardedInventory / openInventory >= 0.85,
      measured: guardRatio(guardedInventory, openInventory),
    },
    {
      label: 'GET /pets/{petId} without a key: with rate limit (per address) >= 85% of without (SQLite)',
      passed: guardedGet / openGet >= 0.85,
      measured: guardRatio(guardedGet, openGet),
    },
    {
      label: 'SQLite GET /pets/{petId} >= 70% of the bare server',
      passed: sqliteGet.requestsPerSecond / bareGet >= 0.7,
      measured: versus(sqliteGet.requestsPerSecond),
    },
    {
      label: 'SQLite GET /pets/{petId} p99 < 5 ms',
      passed: sqliteGet.p99Ms < 5,
      measured: formatMs(sqliteGet.p99Ms),
    },
    {
      label: "SQLite POST /store/orders >= 25% of the bare server's GET /pets/{petId}",
      passed: sqliteOrder.requestsPerSecond / bareGet >= 0.25,
      measured: versus(sqliteOrder.requestsPerSecond),
    },
  ];

  const labelOf = (kind: TargetKind) => targets.find((t) => t.kind === kind)?.label ?? kind;
  const endpointOf = (key: EndpointKey) => endpoints.find((e) => e.key === key)?.label ?? key;
  const warnings = measurements.flatMap((m) =>
    disturbanceNotes(config, `round ${m.round}, ${labelOf(m.target)}, ${endpointOf(m.endpoint)}`, m),
  );

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
        'vs bare GET /pets/{petId}',
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
      guard: {
        getInventory: {
          with: guardedInventory,
          without: openInventory,
          ratio: guardedInventory / openInventory,
        },
        getPet: { with: guardedGet, without: openGet, ratio: guardedGet / openGet },
      },
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
