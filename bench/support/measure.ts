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
  const snapshot = () => cpuSnapshot(spec.server.pid, spec.databaseNames, spec.companionPids);
  const before = snapshot();
  let wrk: { requestsPerSecond: number; p99Ms: number; requests: number };
  let problem: string | null;
  try {
    const result = await runWrk({
      url: `${spec.server.url}${spec.path}`,
      connections: config.connections,
      durationSeconds: spec.seconds,
      cpu: config.loadCpu,
      script: spec.script,
      headers: spec.headers,
    });
    wrk = result;
    problem = wrkProblem(result);
  } catch (error) {
    wrk = NAN_FIGURES;
    problem = (error as Error).message;
  }
  const use = cpuUse(before, snapshot());
  if (!problem && spec.verify) problem = await spec.verify({ requests: wrk.requests });
  const perRequest = (seconds: number) => (wrk.requests > 0 ? (seconds * 1e6) / wrk.requests : Number.NaN);
  return {
    requestsPerSecond: wrk.requestsPerSecond,
    p99Ms: wrk.p99Ms,
    requests: wrk.requests,
    serverUsPerRequest: perRequest(use.serverSeconds),
    databaseUsPerRequest: perRequest(use.databaseSeconds),
    companionUsPerRequest: perRequest(use.companionSeconds),
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
