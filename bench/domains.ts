import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  sql,
  type UnknownRow,
} from 'kysely';
import { loadPlatformConfig } from '../src/config/index.ts';
import { ManualClock } from '../src/lib/clock.ts';
import { parseHostname } from '../src/lib/hostname.ts';
import { createTeam, setPlan } from '../src/platform/accounts/teams.ts';
import { createUser } from '../src/platform/accounts/users.ts';
import { ChangeFeed } from '../src/platform/changes.ts';
import type { PlatformContext } from '../src/platform/context.ts';
import { type PlatformTables, platformMigrations } from '../src/platform/db-schema.ts';
import { insertDomain } from '../src/platform/domains/add-domain.ts';
import { checkDueDomains } from '../src/platform/domains/check-due-domains.ts';
import { createDnsResolver, type DnsResolver } from '../src/platform/domains/dns-check.ts';
import { PLANS } from '../src/platform/plans.ts';
import { deployProject } from '../src/platform/projects/deploys.ts';
import { createProject, type Project } from '../src/platform/projects/projects.ts';
import {
  type Dialect,
  migrateToLatest,
  openDatabase,
  type StorageLocation,
  transact,
} from '../src/storage/index.ts';
import { startDns } from '../test/support/dns.ts';
import type { BenchConfig } from './support/config.ts';
import { type CpuSnapshot, cpuSnapshot, cpuUse, waitForQuiet } from './support/cpu.ts';
import { createBenchDatabase } from './support/postgres.ts';
import {
  formatRate,
  formatRatio,
  median,
  renderTable,
  type Suite,
  type SuiteReport,
  type Table,
} from './support/report.ts';

/**
 * Issue 4's benchmark: verifying 1,000 custom domains against a local authoritative DNS server
 * (NSD, as in the tests). Every domain is a subdomain with the right CNAME, so each check is one
 * CNAME lookup plus the platform's own work (the rival lookup, the transaction moving the domain
 * to `verified` with its history event and certificate order, the certificate status). The background checker's pass, `checkDueDomains`, is timed
 * at several concurrencies on SQLite and PostgreSQL, next to the same number of bare
 * `resolveCname` calls through a node:dns Resolver at the same concurrency: the ceiling DNS alone
 * allows on this machine. See docs/benchmarks.md.
 *
 * `node bench/domains.ts [--domains N] [--concurrency 1,8,32] [--rounds N] [--dialect sqlite|postgres]`
 */

export interface DomainsBenchOptions {
  /** Domains to add and verify (default 1,000), spread over projects of the Enterprise limit. */
  domains?: number;
  /** Concurrencies of `checkDueDomains` to time (default 1, 8, 32, 64, 128). */
  concurrency?: number[];
  /** Measured rounds per concurrency; the table gives medians (default 3). */
  rounds?: number;
  /** Default both; PostgreSQL is left out when `postgresUrl` is null. */
  dialects?: Dialect[];
  /** Admin URL of the PostgreSQL server (a database is created and dropped). */
  postgresUrl?: string | null;
  /** CPU (cores) other processes may use during a run before it counts as disturbed. */
  noiseLimitCores?: number;
  /** Seconds to wait for the machine to calm down before each timed run. */
  quietWaitSeconds?: number;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/** One timed pass of the checker over every domain, and the bare DNS pass next to it. */
export interface DomainsRun {
  readonly dialect: Dialect;
  readonly concurrency: number;
  readonly round: number;
  readonly seconds: number;
  readonly domainsPerSecond: number;
  /** What checkDueDomains returned, and the rows found afterwards. */
  readonly checked: number;
  readonly verified: number;
  readonly stillDue: number;
  readonly peakRssDeltaBytes: number;
  readonly peakHeapDeltaBytes: number;
  readonly peakRssBytes: number;
  /** Heap in use after the run and a full GC, minus before: what the run left behind. */
  readonly retainedHeapBytes: number;
  readonly memorySamples: number;
  /** SQL statements per domain (BEGIN/COMMIT not counted) and DNS queries per domain. */
  readonly sqlPerDomain: number;
  readonly dnsPerDomain: number;
  /** Changes published to the edge's feed per domain. */
  readonly changesPerDomain: number;
  /** CPU time per domain, in microseconds: this process, NSD's server, the database server. */
  readonly nodeCpuUs: number;
  readonly nsdCpuUs: number;
  readonly databaseCpuUs: number;
  /** CPU used by the rest of the machine meanwhile, in cores. */
  readonly otherCores: number;
  /** CPU the hypervisor gave to other guests meanwhile, in cores. */
  readonly stealCores: number;
  readonly raw: RawDnsRun;
  readonly problem: string | null;
}

export interface RawDnsRun {
  readonly seconds: number;
  readonly lookupsPerSecond: number;
  readonly failures: number;
  readonly nodeCpuUs: number;
  readonly nsdCpuUs: number;
}

/** Medians over the rounds of one dialect and concurrency (memory: the highest peak). */
export interface DomainsBenchRow {
  readonly dialect: Dialect;
  readonly concurrency: number;
  readonly domainsPerSecond: number;
  readonly rawLookupsPerSecond: number;
  /** domainsPerSecond / rawLookupsPerSecond. */
  readonly ratio: number;
  readonly peakRssDeltaBytes: number;
  readonly peakHeapDeltaBytes: number;
  readonly retainedHeapBytes: number;
  readonly allVerified: boolean;
  readonly sqlPerDomain: number;
  readonly dnsPerDomain: number;
  readonly changesPerDomain: number;
  readonly nodeCpuUs: number;
  readonly nsdCpuUs: number;
  readonly databaseCpuUs: number;
  /** Node CPU per bare resolveCname call, in microseconds. */
  readonly rawNodeCpuUs: number;
  readonly otherCores: number;
  readonly stealCores: number;
}

export interface DomainsSetup {
  readonly dialect: Dialect;
  readonly projects: number;
  /** Inserting every domain through insertDomain (one transaction per project), not timed below. */
  readonly insertSeconds: number;
}

export interface DomainsBenchResult {
  readonly domains: number;
  readonly concurrency: readonly number[];
  readonly rounds: number;
  readonly machine: string;
  readonly setups: readonly DomainsSetup[];
  readonly rows: readonly DomainsBenchRow[];
  readonly runs: readonly DomainsRun[];
  /** Runs that failed their check (not every domain verified, DNS failures). */
  readonly problems: readonly string[];
  /** Runs during which the rest of the machine was busy. */
  readonly warnings: readonly string[];
}

const DEFAULT_CONCURRENCY = [1, 8, 32, 64, 128];
const DEFAULT_POSTGRES_URL = 'postgres://root@127.0.0.1:5432/test';
const BENCH_ZONE = 'bench.test';
const PLATFORM_DOMAIN = 'platform.test';
/** The Enterprise plan: 500 projects of 100 domains. */
const MAX_DOMAINS = 50_000;
const MAX_CONCURRENCY = 1_000;
const MAX_ROUNDS = 20;
const SAMPLE_EVERY_MS = 10;
const RAW_PASSES = 3;
const DOC = JSON.stringify({ openapi: '3.0.3', info: { title: 'Bench', version: '1' }, paths: {} });
/** As src/main/platform.ts builds it. */
const RESOLVER = { timeoutMs: 2000, tries: 2 } as const;

export async function runDomainsBenchmark(options: DomainsBenchOptions = {}): Promise<DomainsBenchResult> {
  const domains = options.domains ?? 1000;
  const levels = options.concurrency ?? DEFAULT_CONCURRENCY;
  const rounds = options.rounds ?? 3;
  const postgresUrl =
    options.postgresUrl === undefined
      ? (process.env.BENCH_POSTGRES_URL ?? DEFAULT_POSTGRES_URL)
      : options.postgresUrl;
  const dialects = (options.dialects ?? ['sqlite', 'postgres']).filter(
    (d) => d === 'sqlite' || (postgresUrl !== null && postgresUrl !== 'off'),
  );
  const noiseLimit = options.noiseLimitCores ?? 0.25;
  const quietWaitMs = (options.quietWaitSeconds ?? 3) * 1000;
  const log = options.log ?? (() => {});
  if (!Number.isInteger(domains) || domains < 1 || domains > MAX_DOMAINS) {
    throw new Error(`domains must be a whole number from 1 to ${MAX_DOMAINS} (got ${domains})`);
  }
  if (levels.length === 0 || levels.some((c) => !Number.isInteger(c) || c < 1 || c > MAX_CONCURRENCY)) {
    throw new Error(
      `concurrency must be whole numbers from 1 to ${MAX_CONCURRENCY} (got ${levels.join(',')})`,
    );
  }
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > MAX_ROUNDS) {
    throw new Error(`rounds must be a whole number from 1 to ${MAX_ROUNDS} (got ${rounds})`);
  }

  const perProject = PLANS.enterprise.maxDomainsPerProject;
  const projectCount = Math.ceil(domains / perProject);
  const width = Math.max(4, String(domains).length);
  const hostnames = Array.from(
    { length: domains },
    (_, i) => `d${String(i + 1).padStart(width, '0')}.${BENCH_ZONE}`,
  );
  const slugs = Array.from({ length: projectCount }, (_, i) => `petstore-${String(i + 1).padStart(2, '0')}`);
  const slugOf = (i: number) => slugs[Math.floor(i / perProject)] as string;

  const setups: DomainsSetup[] = [];
  const runs: DomainsRun[] = [];
  const problems: string[] = [];
  const warnings: string[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  try {
    log(`starting NSD with ${domains} CNAME records`);
    const dns = await startDns({ zones: [BENCH_ZONE, PLATFORM_DOMAIN] });
    cleanups.push(() => dns.stop());
    await dns.setRecords(
      PLATFORM_DOMAIN,
      slugs.map((slug) => ({ name: slug, type: 'A' as const, value: '127.0.0.1' })),
    );
    await dns.setRecords(
      BENCH_ZONE,
      hostnames.map((name, i) => ({
        name,
        type: 'CNAME' as const,
        value: `${slugOf(i)}.${PLATFORM_DOMAIN}`,
      })),
    );
    const nsdPid = nsdServerPid();
    const expected = hostnames.map((_, i) => `${slugOf(i)}.${PLATFORM_DOMAIN}`);
    const gc = exposeGc();

    for (const dialect of dialects) {
      options.signal?.throwIfAborted();
      const storage = await openStorage(dialect, postgresUrl ?? DEFAULT_POSTGRES_URL);
      cleanups.push(storage.drop);
      const database = openDatabase<PlatformTables>(storage.location);
      cleanups.push(() => database.close());
      await migrateToLatest(database.db, database.dialect, 'platform', platformMigrations);
      const counter = new QueryCounter();
      const clock = new ManualClock('2026-11-22T12:00:00Z');
      const config = loadPlatformConfig({
        PLATFORM_DOMAIN,
        DNS_SERVERS: dns.servers.join(','),
        PLATFORM_IPV4: '127.0.0.1',
      });
      const dnsCounter = { queries: 0 };
      const changes = new ChangeFeed();
      let published = 0;
      changes.subscribe(() => published++);
      const ctx: PlatformContext = {
        db: database.db.withPlugin(counter),
        dialect: database.dialect,
        clock,
        config,
        resolver: countingResolver(
          createDnsResolver({ servers: config.dnsServers, ...RESOLVER }),
          dnsCounter,
        ),
        changes,
      };

      log(`${dialect}: ${projectCount} Enterprise projects, inserting ${domains} domains`);
      const insertSeconds = await seed(ctx, slugs, hostnames, perProject);
      setups.push({ dialect, projects: projectCount, insertSeconds });
      log(`${dialect}: inserted in ${insertSeconds.toFixed(2)} s`);
      const now = clock.now().toISOString();
      const reset = () => resetDomains(ctx, now);
      await reset();

      const rawResolver = createDnsResolver({ servers: config.dnsServers, ...RESOLVER });
      const snapshot = (): CpuSnapshot => ({
        ...cpuSnapshot(nsdPid),
        database: storage.databaseName === null ? 0 : postgresTicks(storage.databaseName),
      });
      const measureRaw = async (concurrency: number): Promise<RawDnsRun> => {
        const cpuBefore = snapshot();
        const nodeBefore = process.cpuUsage();
        const started = performance.now();
        const failures = await rawLookups(rawResolver, hostnames, expected, concurrency);
        const seconds = (performance.now() - started) / 1000;
        const node = process.cpuUsage(nodeBefore);
        const use = cpuUse(cpuBefore, snapshot());
        return {
          seconds,
          lookupsPerSecond: domains / seconds,
          failures,
          nodeCpuUs: (node.user + node.system) / domains,
          nsdCpuUs: (use.serverSeconds * 1e6) / domains,
        };
      };
      const measure = async (concurrency: number, round: number): Promise<DomainsRun> => {
        options.signal?.throwIfAborted();
        await waitForQuiet(noiseLimit, quietWaitMs, nsdPid);
        // The rest of the machine is watched over the bare DNS run and the checker's run together:
        // CPU ticks are 10 ms, too coarse for one run of a fraction of a second.
        const spanBefore = snapshot();
        // The bare DNS pass is short (tens of ms): the median of three is steadier.
        const passes: RawDnsRun[] = [];
        for (let pass = 0; pass < RAW_PASSES; pass++) passes.push(await measureRaw(concurrency));
        passes.sort((a, b) => a.lookupsPerSecond - b.lookupsPerSecond);
        const raw = passes[Math.floor(RAW_PASSES / 2)] as RawDnsRun;
        const rawFailures = passes.reduce((sum, p) => sum + p.failures, 0);
        gc?.();
        const cpuBefore = snapshot();
        const nodeBefore = process.cpuUsage();
        counter.queries = 0;
        dnsCounter.queries = 0;
        published = 0;
        const sampler = startMemorySampler(SAMPLE_EVERY_MS);
        const started = performance.now();
        let checked = 0;
        let failure: string | null = null;
        try {
          checked = await checkDueDomains(ctx, { limit: domains, concurrency });
        } catch (error) {
          failure = `checkDueDomains threw: ${(error as Error).message}`;
        }
        const seconds = (performance.now() - started) / 1000;
        const memory = sampler.stop();
        gc?.();
        const retainedHeap = process.memoryUsage().heapUsed - memory.baseHeap;
        const node = process.cpuUsage(nodeBefore);
        const spanAfter = snapshot();
        const use = cpuUse(cpuBefore, spanAfter);
        const span = cpuUse(spanBefore, spanAfter);
        const sqlCount = counter.queries;
        const dnsCount = dnsCounter.queries;
        const changeCount = published;
        const counts = await countStates(ctx, now);
        const problem =
          failure ??
          (checked !== domains ||
          counts.verified !== domains ||
          counts.due !== 0 ||
          counts.certificateOrders !== domains ||
          rawFailures > 0
            ? `checked ${checked}, verified ${counts.verified} of ${domains}, still due ${counts.due}, ` +
              `certificates ordered ${counts.certificateOrders}, bare DNS failures ${rawFailures}`
            : null);
        await reset();
        return {
          dialect,
          concurrency,
          round,
          seconds,
          domainsPerSecond: checked / seconds,
          checked,
          verified: counts.verified,
          stillDue: counts.due,
          peakRssDeltaBytes: memory.rssDelta,
          peakHeapDeltaBytes: memory.heapDelta,
          peakRssBytes: memory.peakRss,
          retainedHeapBytes: retainedHeap,
          memorySamples: memory.samples,
          sqlPerDomain: sqlCount / domains,
          dnsPerDomain: dnsCount / domains,
          changesPerDomain: changeCount / domains,
          nodeCpuUs: (node.user + node.system) / domains,
          nsdCpuUs: (use.serverSeconds * 1e6) / domains,
          databaseCpuUs: (use.databaseSeconds * 1e6) / domains,
          otherCores: span.otherCores,
          stealCores: span.stealCores,
          raw,
          problem,
        };
      };

      log(`${dialect}: warm-up pass (not measured)`);
      const warm = await measure(8, 0);
      if (warm.problem) problems.push(`${dialect} warm-up: ${warm.problem}`);

      for (let round = 1; round <= rounds; round++) {
        // The order of the concurrencies rotates from round to round, so drift spreads over all.
        for (let k = 0; k < levels.length; k++) {
          const concurrency = levels[(k + round - 1) % levels.length] as number;
          const run = await measure(concurrency, round);
          runs.push(run);
          const label = `${dialect} c=${concurrency} round ${round}`;
          log(
            `${label}: ${formatRate(run.domainsPerSecond)} domains/s, bare DNS ${formatRate(run.raw.lookupsPerSecond)} lookups/s, ` +
              `RSS +${mib(run.peakRssDeltaBytes)}, heap +${mib(run.peakHeapDeltaBytes)}, ` +
              `${run.verified}/${domains} verified, other CPU ${run.otherCores.toFixed(2)} cores, steal ${run.stealCores.toFixed(2)}`,
          );
          if (run.problem) problems.push(`${label}: ${run.problem}`);
          if (run.otherCores > noiseLimit) {
            warnings.push(`${label}: other processes used ${run.otherCores.toFixed(2)} cores`);
          }
        }
      }
    }
  } finally {
    // Newest first: the database closes before its storage goes, NSD stops last.
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        problems.push(`cleanup failed: ${(error as Error).message}`);
      }
    }
  }

  const rows: DomainsBenchRow[] = [];
  for (const dialect of dialects) {
    for (const concurrency of levels) {
      const mine = runs.filter((r) => r.dialect === dialect && r.concurrency === concurrency);
      if (mine.length === 0) continue;
      const of = (pick: (r: DomainsRun) => number) => median(mine.map(pick));
      const domainsPerSecond = of((r) => r.domainsPerSecond);
      const rawLookupsPerSecond = of((r) => r.raw.lookupsPerSecond);
      rows.push({
        dialect,
        concurrency,
        domainsPerSecond,
        rawLookupsPerSecond,
        ratio: domainsPerSecond / rawLookupsPerSecond,
        peakRssDeltaBytes: Math.max(...mine.map((r) => r.peakRssDeltaBytes)),
        peakHeapDeltaBytes: Math.max(...mine.map((r) => r.peakHeapDeltaBytes)),
        retainedHeapBytes: Math.max(...mine.map((r) => r.retainedHeapBytes)),
        allVerified: mine.every((r) => r.problem === null),
        sqlPerDomain: of((r) => r.sqlPerDomain),
        dnsPerDomain: of((r) => r.dnsPerDomain),
        changesPerDomain: of((r) => r.changesPerDomain),
        rawNodeCpuUs: of((r) => r.raw.nodeCpuUs),
        nodeCpuUs: of((r) => r.nodeCpuUs),
        nsdCpuUs: of((r) => r.nsdCpuUs),
        databaseCpuUs: of((r) => r.databaseCpuUs),
        otherCores: Math.max(...mine.map((r) => r.otherCores)),
        stealCores: Math.max(...mine.map((r) => r.stealCores)),
      });
    }
  }
  return {
    domains,
    concurrency: levels,
    rounds,
    machine: `${cpus().length} x ${cpus()[0]?.model ?? 'unknown'}, Node.js ${process.version}`,
    setups,
    rows,
    runs,
    problems,
    warnings,
  };
}

/** An admin, an Enterprise team, projects deployed, and every domain inserted `unverified`. */
async function seed(
  ctx: PlatformContext,
  slugs: readonly string[],
  hostnames: readonly string[],
  perProject: number,
): Promise<number> {
  const admin = await createUser(ctx, {
    email: 'admin@bench.test',
    password: 'bench admin password',
    isAdmin: true,
  });
  const team = await createTeam(ctx, admin, 'Bench');
  await setPlan(ctx, admin, team.id, 'enterprise');
  const projects: Project[] = [];
  for (const slug of slugs) {
    const created = await createProject(ctx, admin, {
      teamId: team.id,
      slug,
      name: slug,
      originUrl: 'http://127.0.0.1:4010',
    });
    const deploy = await deployProject(ctx, admin, slug, { document: DOC });
    projects.push({ ...created, plan: 'enterprise', activeDeployId: deploy.id });
  }
  const started = performance.now();
  for (const [p, project] of projects.entries()) {
    const mine = hostnames.slice(p * perProject, (p + 1) * perProject);
    await transact(ctx.db, async (trx) => {
      for (const name of mine) {
        const parsed = parseHostname(name, { platformDomains: [ctx.config.platformDomain] });
        if (!parsed.ok) throw new Error(`${name} does not parse: ${parsed.message}`);
        await insertDomain(trx, ctx, admin, project, parsed);
      }
    });
  }
  const seconds = (performance.now() - started) / 1000;
  if (ctx.dialect === 'postgres') await sql`ANALYZE`.execute(ctx.db);
  return seconds;
}

/** Every domain back to `unverified` and due now, and the checks' history events gone. */
async function resetDomains(ctx: PlatformContext, now: string): Promise<void> {
  await ctx.db
    .updateTable('domains')
    .set({
      state: 'unverified',
      reason: 'not_found_yet',
      reason_detail: null,
      verified_at: null,
      last_checked_at: null,
      next_check_at: now,
      check_attempts: 0,
    })
    .where('state', '<>', 'removed')
    .execute();
  await ctx.db.deleteFrom('domain_events').where('action', '=', 'background').execute();
  // A domain verified for the first time gets its certificate ordered: no order yet, as after adding.
  await ctx.db.deleteFrom('certificate_jobs').execute();
  // Every run starts from the same tables, not from the previous runs' dead rows.
  if (ctx.dialect === 'postgres') {
    await sql`VACUUM (ANALYZE) domains, domain_events, certificate_jobs`.execute(ctx.db);
  }
}

async function countStates(
  ctx: PlatformContext,
  now: string,
): Promise<{ verified: number; due: number; certificateOrders: number }> {
  const row = await ctx.db
    .selectFrom('domains')
    .select((eb) => [
      eb.fn.countAll<number>().filterWhere('state', '=', 'verified').as('verified'),
      eb.fn.countAll<number>().filterWhere('next_check_at', '<=', now).as('due'),
    ])
    .where('state', '<>', 'removed')
    .executeTakeFirstOrThrow();
  const orders = await ctx.db
    .selectFrom('certificate_jobs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('state', '=', 'pending')
    .executeTakeFirstOrThrow();
  return { verified: Number(row.verified), due: Number(row.due), certificateOrders: Number(orders.n) };
}

/** The same number of CNAME lookups as the checker makes, with the same worker pool; failures. */
async function rawLookups(
  resolver: DnsResolver,
  hostnames: readonly string[],
  expected: readonly string[],
  concurrency: number,
): Promise<number> {
  let next = 0;
  let failures = 0;
  const worker = async () => {
    for (let i = next++; i < hostnames.length; i = next++) {
      try {
        const answer = await resolver.resolveCname(hostnames[i] as string);
        if (answer[0] !== expected[i]) failures++;
      } catch {
        failures++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return failures;
}

/** Counts the SQL statements Kysely runs (transactions' BEGIN and COMMIT are not statements here). */
class QueryCounter implements KyselyPlugin {
  queries = 0;

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.queries++;
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

/** The resolver, counting every query made through it. */
function countingResolver(inner: DnsResolver, counter: { queries: number }): DnsResolver {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(inner, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== 'function') return value;
      let wrapper = wrapped.get(property);
      if (wrapper === undefined) {
        wrapper = (...args: unknown[]) => {
          counter.queries++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
        wrapped.set(property, wrapper);
      }
      return wrapper;
    },
  });
}

interface MemoryPeak {
  readonly rssDelta: number;
  readonly heapDelta: number;
  readonly baseHeap: number;
  readonly peakRss: number;
  readonly samples: number;
}

/** Samples RSS and heap every `everyMs` until stopped; peaks minus the figures at the start. */
function startMemorySampler(everyMs: number): { stop(): MemoryPeak } {
  const base = process.memoryUsage();
  let peakRss = base.rss;
  let peakHeap = base.heapUsed;
  let samples = 0;
  const sample = () => {
    const now = process.memoryUsage();
    samples++;
    if (now.rss > peakRss) peakRss = now.rss;
    if (now.heapUsed > peakHeap) peakHeap = now.heapUsed;
  };
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return {
        rssDelta: peakRss - base.rss,
        heapDelta: peakHeap - base.heapUsed,
        baseHeap: base.heapUsed,
        peakRss,
        samples,
      };
    },
  };
}

/** A full GC before each run gives a steady heap baseline; without --expose-gc, V8 is asked for it. */
function exposeGc(): (() => void) | undefined {
  if (typeof globalThis.gc === 'function') return globalThis.gc;
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    return typeof gc === 'function' ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The `nsd: server` process of the NSD we started, which answers the queries: a descendant of
 * this process (our child becomes `nsd: xfrd`, its child `nsd: main` forks the server).
 */
function nsdServerPid(): number {
  const stats = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map((entry) => {
      try {
        const text = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const close = text.lastIndexOf(')');
        const ppid = Number(text.slice(close + 2).split(' ')[1]);
        return { pid: Number(entry), ppid, comm: text.slice(text.indexOf('(') + 1, close) };
      } catch {
        return undefined;
      }
    })
    .filter((s) => s !== undefined);
  const mine = new Set([process.pid]);
  // Bounded: each pass adds a generation, and a process tree is not deeper than the process count.
  for (let pass = 0, grew = true; grew && pass < stats.length; pass++) {
    grew = false;
    for (const s of stats) {
      if (!mine.has(s.pid) && mine.has(s.ppid)) {
        mine.add(s.pid);
        grew = true;
      }
    }
  }
  return stats.find((s) => mine.has(s.pid) && s.comm.startsWith('nsd: server'))?.pid ?? -1;
}

interface OpenedStorage {
  readonly location: StorageLocation;
  /** PostgreSQL: the database created for the run. */
  readonly databaseName: string | null;
  drop(): Promise<void>;
}

async function openStorage(dialect: Dialect, postgresUrl: string): Promise<OpenedStorage> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'kennel-bench-domains-'));
    return {
      location: { kind: 'sqlite', file: join(dir, 'kennel.db') },
      databaseName: null,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const created = await createBenchDatabase(postgresUrl, 'kennel_bench_domains');
  // The pool size the platform gets in production (src/storage/connection.ts's default).
  return { location: { kind: 'postgres', url: created.url }, databaseName: created.name, drop: created.drop };
}

/**
 * CPU ticks (utime + stime) of the PostgreSQL processes working for this run: the backends
 * connected to `database` and the server's own background processes (writer, WAL, autovacuum),
 * but not other clients' backends, whose title names their database and client address.
 */
function postgresTicks(database: string): number {
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      if (stat.slice(stat.indexOf('(') + 1, close) !== 'postgres') continue;
      const title = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const backend = /\(\d+\)|\[local\]/.test(title);
      if (backend && !title.includes(` ${database} `)) continue;
      const fields = stat.slice(close + 2).split(' ');
      ticks += Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
    } catch {
      // The process ended meanwhile.
    }
  }
  return ticks;
}

const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;

/** The summary table of a result, one row per database and concurrency. */
export function domainsTable(result: DomainsBenchResult): Table {
  return {
    headers: [
      'Database',
      'Concurrency',
      'Domains/s',
      'Bare DNS lookups/s',
      'Ratio',
      'Peak RSS delta',
      'Peak heap delta',
      'All verified',
    ],
    right: [1, 2, 3, 4, 5, 6],
    rows: result.rows.map((r) => [
      r.dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL',
      String(r.concurrency),
      formatRate(r.domainsPerSecond),
      formatRate(r.rawLookupsPerSecond),
      formatRatio(r.ratio),
      mib(r.peakRssDeltaBytes),
      mib(r.peakHeapDeltaBytes),
      r.allVerified ? 'yes' : 'NO',
    ]),
  };
}

/** Where the time goes: statements and queries per domain, CPU per domain by process. */
export function domainsCostTable(result: DomainsBenchResult): Table {
  return {
    headers: [
      'Database',
      'Concurrency',
      'SQL/domain',
      'DNS/domain',
      'Changes/domain',
      'Node CPU µs/domain',
      'Bare DNS Node CPU µs/lookup',
      'NSD CPU µs/domain',
      'DB server CPU µs/domain',
      'Heap retained',
      'Other CPU (cores)',
      'Steal (cores)',
    ],
    right: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
    rows: result.rows.map((r) => [
      r.dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL',
      String(r.concurrency),
      r.sqlPerDomain.toFixed(1),
      r.dnsPerDomain.toFixed(1),
      r.changesPerDomain.toFixed(1),
      Math.round(r.nodeCpuUs).toString(),
      Math.round(r.rawNodeCpuUs).toString(),
      Math.round(r.nsdCpuUs).toString(),
      r.dialect === 'sqlite' ? '-' : Math.round(r.databaseCpuUs).toString(),
      mib(r.retainedHeapBytes),
      r.otherCores.toFixed(2),
      r.stealCores.toFixed(2),
    ]),
  };
}

/** For bench/run.ts: `npm run bench -- domains` once added to its SUITES. */
export const domainsSuite: Suite = {
  name: 'domains',
  description: 'verifying 1,000 custom domains against NSD (SQLite, PostgreSQL)',
  async run(config: BenchConfig, log: (line: string) => void): Promise<SuiteReport> {
    const result = await runDomainsBenchmark({
      rounds: Math.min(config.rounds, 3),
      postgresUrl: config.postgresUrl,
      noiseLimitCores: Math.max(config.noiseLimitCores, 0.25),
      quietWaitSeconds: Math.min(config.quietWaitSeconds, 3),
      log,
    });
    return {
      suite: 'domains',
      title: `Verifying ${result.domains.toLocaleString('en-US')} custom domains (medians of ${result.rounds} rounds)`,
      table: domainsTable(result),
      checks: result.rows.map((r) => ({
        label: `${r.dialect} c=${r.concurrency}: every domain verified`,
        passed: r.allVerified,
        measured: r.allVerified ? 'yes' : 'no',
      })),
      problems: result.problems,
      warnings: result.warnings,
      data: result,
    };
  },
};

function parseArgs(args: readonly string[]): DomainsBenchOptions {
  const options: DomainsBenchOptions = {};
  for (let i = 0; i < args.length; i += 2) {
    const [flag, value] = [args[i], args[i + 1]];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === '--domains') options.domains = Number(value);
    else if (flag === '--concurrency') options.concurrency = value.split(',').map(Number);
    else if (flag === '--rounds') options.rounds = Number(value);
    else if (flag === '--dialect' && (value === 'sqlite' || value === 'postgres')) options.dialects = [value];
    else {
      throw new Error(
        `unknown argument ${flag} ${value}\nUsage: node bench/domains.ts [--domains N] [--concurrency 1,8,32] [--rounds N] [--dialect sqlite|postgres]`,
      );
    }
  }
  return options;
}

if (import.meta.main) {
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort(new Error('interrupted')));
  process.once('SIGTERM', () => controller.abort(new Error('terminated')));
  try {
    const started = Date.now();
    const result = await runDomainsBenchmark({
      ...parseArgs(process.argv.slice(2)),
      log: (line) => console.log(`[domains] ${line}`),
      signal: controller.signal,
    });
    console.log(`\n${result.machine}`);
    for (const setup of result.setups) {
      console.log(
        `${setup.dialect}: ${result.domains} domains in ${setup.projects} projects inserted in ${setup.insertSeconds.toFixed(2)} s`,
      );
    }
    console.log(
      `\nVerifying ${result.domains} domains, medians of ${result.rounds} rounds (memory: highest peak)\n\n${renderTable(domainsTable(result))}`,
    );
    console.log(`\n${renderTable(domainsCostTable(result))}`);
    for (const warning of result.warnings) console.log(`DISTURBED  ${warning}`);
    for (const problem of result.problems) console.log(`FAILED  ${problem}`);
    console.log(`\ndone in ${Math.round((Date.now() - started) / 1000)} s`);
    process.exitCode = result.problems.length > 0 ? 1 : 0;
  } catch (error) {
    console.error((error as Error).stack ?? error);
    process.exitCode = 1;
  }
}
