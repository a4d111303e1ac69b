import type { BenchConfig } from './config.ts';
import { cpuSnapshot, cpuUse, waitForQuiet } from './cpu.ts';
import type { RunningServer } from './servers.ts';
import { runWrk, wrkProblem } from './wrk.ts';

/** One wrk run against one server, with where the CPU went meanwhile. */
export interface RunFigures {
  readonly requestsPerSecond: number;
  readonly p99Ms: number;
  readonly requests: number;
  /** CPU time of the server process per answered request, in microseconds. */
  readonly serverUsPerRequest: number;
  /** CPU time of the database server's processes per answered request (0 when not watched). */
  readonly databaseUsPerRequest: number;
  /** CPU time of the companion processes per answered request (0 when none). */
  readonly companionUsPerRequest: number;
  /** CPU other processes used during the run, in cores (see cpu.ts). */
  readonly otherCores: number;
  readonly stealCores: number;
  /** Runs it took: a run disturbed by other processes is measured again (BENCH_RETRIES). */
  readonly attempts: number;
  /** Why the run cannot be trusted, or null. */
  readonly problem: string | null;
}

export interface RunSpec {
  readonly server: RunningServer;
  /** Path (and query) on the server. */
  readonly path: string;
  /** wrk Lua script, for requests other than a plain GET. */
  readonly script?: string;
  readonly seconds: number;
  /** Names of the database server's processes, counted with the server (e.g. `postgres`). */
  readonly databaseNames?: readonly string[];
  /** Processes working for the server (a proxy's origin): their CPU is not "other" CPU. */
  readonly companionPids?: readonly number[];
  /**
   * More nodes of the same service (on the same database): wrk runs against `server` and each of
   * these at once, the connections shared out, and the figures are the sums (p99: the worst).
   * Their CPU counts as the server's.
   */
  readonly moreNodes?: readonly RunningServer[];
  /** Request headers wrk sends (e.g. Host). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Runs before each attempt (e.g. resetting stock). */
  readonly prepare?: () => Promise<void>;
  /** Checks the server after each attempt; returns a problem or null. */
  readonly verify?: (figures: { requests: number }) => Promise<string | null>;
}

const NAN_FIGURES = { requestsPerSecond: Number.NaN, p99Ms: Number.NaN, requests: 0 };

/**
 * Runs wrk (pinned to the load CPU) once the machine is quiet, and again when other processes
 * disturbed the run, up to BENCH_RETRIES times.
 */
export async function measureRun(
  config: BenchConfig,
  spec: RunSpec,
  onRetry: (figures: RunFigures) => void = () => {},
): Promise<RunFigures> {
  for (let attempt = 1; ; attempt++) {
    const figures = await measureOnce(config, spec, attempt);
    if (figures.problem || !(figures.otherCores > config.noiseLimitCores) || attempt > config.retries) {
      return figures;
    }
    onRetry(figures);
  }
}

async function measureOnce(config: BenchConfig, spec: RunSpec, attempt: number): Promise<RunFigures> {
  await spec.prepare?.();
  // Lets the server settle (closed sockets, GC) and the rest of the machine calm down.
  await waitForQuiet(config.noiseLimitCores, config.quietWaitSeconds * 1000, spec.server.pid);
  const nodes = [spec.server, ...(spec.moreNodes ?? [])];
  const nodePids = nodes.slice(1).map((node) => node.pid);
  const snapshot = () =>
    cpuSnapshot(spec.server.pid, spec.databaseNames, [...(spec.companionPids ?? []), ...nodePids]);
  const nodeSnapshot = () => (nodePids.length > 0 ? cpuSnapshot(-1, [], nodePids) : undefined);
  const before = snapshot();
  const nodesBefore = nodeSnapshot();
  let wrk: { requestsPerSecond: number; p99Ms: number; requests: number };
  let problem: string | null;
  try {
    const results = await Promise.all(
      nodes.map((node, i) =>
        runWrk({
          url: `${node.url}${spec.path}`,
          // Shared out so the total stays `connections`, as against one node.
          connections:
            Math.floor(config.connections / nodes.length) + (i < config.connections % nodes.length ? 1 : 0),
          durationSeconds: spec.seconds,
          cpu: config.loadCpu,
          script: spec.script,
          headers: spec.headers,
        }),
      ),
    );
    wrk = {
      requestsPerSecond: results.reduce((sum, r) => sum + r.requestsPerSecond, 0),
      p99Ms: Math.max(...results.map((r) => r.p99Ms)),
      requests: results.reduce((sum, r) => sum + r.requests, 0),
    };
    const problems = results
      .map((r, i) => [r, i] as const)
      .flatMap(([r, i]) => {
        const found = wrkProblem(r);
        return found ? [nodes.length > 1 ? `node ${i + 1}: ${found}` : found] : [];
      });
    problem = problems.length > 0 ? problems.join('; ') : null;
  } catch (error) {
    wrk = NAN_FIGURES;
    problem = (error as Error).message;
  }
  const use = cpuUse(before, snapshot());
  const nodesAfter = nodeSnapshot();
  // The other nodes were watched as companions: their CPU is the server's.
  const moreNodesSeconds = nodesBefore && nodesAfter ? cpuUse(nodesBefore, nodesAfter).companionSeconds : 0;
  if (!problem && spec.verify) problem = await spec.verify({ requests: wrk.requests });
  const perRequest = (seconds: number) => (wrk.requests > 0 ? (seconds * 1e6) / wrk.requests : Number.NaN);
  return {
    requestsPerSecond: wrk.requestsPerSecond,
    p99Ms: wrk.p99Ms,
    requests: wrk.requests,
    serverUsPerRequest: perRequest(use.serverSeconds + moreNodesSeconds),
    databaseUsPerRequest: perRequest(use.databaseSeconds),
    companionUsPerRequest: perRequest(use.companionSeconds - moreNodesSeconds),
    otherCores: use.otherCores,
    stealCores: use.stealCores,
    attempts: attempt,
    problem,
  };
}

/** The summary's DISTURBED lines for one run: other processes or the hypervisor took a core's share. */
export function disturbanceNotes(
  config: BenchConfig,
  what: string,
  run: { readonly otherCores: number; readonly stealCores: number; readonly attempts: number },
): string[] {
  const notes: string[] = [];
  if (run.otherCores > config.noiseLimitCores)
    notes.push(
      `${what}: other processes used ${run.otherCores.toFixed(2)} cores (after ${run.attempts} runs)`,
    );
  if (run.stealCores > config.noiseLimitCores)
    notes.push(`${what}: the hypervisor took ${run.stealCores.toFixed(2)} cores (steal)`);
  return notes;
}
