import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Where the CPU went during a run, from /proc (Linux only; elsewhere the figures are NaN):
 *
 * - the server under test, and the database server's processes when they take part, so a run
 *   reports CPU time per request, steadier than requests per second on a shared machine;
 * - everything else: every process but those, the benchmark itself and the children it has reaped
 *   (wrk). On a two-core machine a test run or a build next to the benchmark halves its figures,
 *   so each run says how busy the rest of the machine was, and runs wait for it to calm down.
 */
export interface CpuSnapshot {
  readonly at: number;
  /** Busy ticks of all CPUs (user, nice, system, irq, softirq). */
  readonly busy: number;
  /** Ticks the hypervisor gave to other guests. */
  readonly steal: number;
  /** This process and the children it has reaped (wrk runs end before the second snapshot). */
  readonly self: number;
  /** The server under test. */
  readonly server: number;
  /** Processes named like the database server (`postgres`), when asked for. */
  readonly database: number;
  /** Processes working with the server (a proxy's origin), when asked for. */
  readonly companions: number;
}

export interface CpuUse {
  /** CPU used by other processes, in cores (0.25 = a quarter of one core on average). */
  readonly otherCores: number;
  /** CPU taken by the hypervisor, in cores. */
  readonly stealCores: number;
  /** CPU seconds of the server under test. */
  readonly serverSeconds: number;
  /** CPU seconds of the database server's processes (0 unless asked for). */
  readonly databaseSeconds: number;
  /** CPU seconds of the companion processes (0 unless asked for). */
  readonly companionSeconds: number;
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/**
 * `serverPid` counts with its descendants (nginx's worker under its master); `companionPids` (with
 * theirs) are counted apart, so an origin sharing the proxy's core is not "other" CPU.
 */
export function cpuSnapshot(
  serverPid: number,
  databaseNames: readonly string[] = [],
  companionPids: readonly number[] = [],
): CpuSnapshot {
  try {
    const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
    let database = 0;
    if (databaseNames.length > 0) {
      for (const entry of readdirSync('/proc')) {
        if (!/^\d+$/.test(entry)) continue;
        const stat = processStat(Number(entry));
        if (stat && databaseNames.includes(stat.name)) database += stat.ticks;
      }
    }
    return {
      at: Date.now(),
      busy: user + nice + system + irq + softirq,
      steal,
      self: processStat(process.pid, true)?.ticks ?? 0,
      server: treeTicks(serverPid),
      database,
      companions: companionPids.reduce((sum, pid) => sum + treeTicks(pid), 0),
    };
  } catch {
    const nan = Number.NaN;
    return { at: Date.now(), busy: nan, steal: nan, self: nan, server: nan, database: nan, companions: nan };
  }
}

export function cpuUse(before: CpuSnapshot, after: CpuSnapshot): CpuUse {
  const ticks = (TICKS_PER_SECOND * (after.at - before.at)) / 1000;
  const server = after.server - before.server;
  const database = after.database - before.database;
  const companions = after.companions - before.companions;
  const other = after.busy - before.busy - (after.self - before.self) - server - database - companions;
  return {
    otherCores: Math.max(0, other) / ticks,
    stealCores: (after.steal - before.steal) / ticks,
    serverSeconds: server / TICKS_PER_SECOND,
    databaseSeconds: database / TICKS_PER_SECOND,
    companionSeconds: companions / TICKS_PER_SECOND,
  };
}

/**
 * Waits until the rest of the machine uses less than `limitCores` over a `windowMs` window, for
 * at most `maxWaitMs`; returns the last window's figures (quiet or not).
 */
export async function waitForQuiet(
  limitCores: number,
  maxWaitMs: number,
  serverPid: number,
  windowMs = 500,
): Promise<CpuUse & { waitedMs: number }> {
  const started = Date.now();
  for (;;) {
    const before = cpuSnapshot(serverPid);
    await sleep(windowMs);
    const use = cpuUse(before, cpuSnapshot(serverPid));
    const waitedMs = Date.now() - started;
    if (!(use.otherCores >= limitCores) || waitedMs >= maxWaitMs) return { ...use, waitedMs };
  }
}

/** CPU ticks of a process and its living descendants (0 once gone). */
function treeTicks(pid: number): number {
  let ticks = processStat(pid)?.ticks ?? 0;
  let children: string;
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8');
  } catch {
    return ticks;
  }
  for (const child of children.trim().split(/\s+/)) if (child) ticks += treeTicks(Number(child));
  return ticks;
}

/** utime + stime (+ reaped children's when asked) of a process, from /proc/<pid>/stat. */
function processStat(pid: number, withChildren = false): { name: string; ticks: number } | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null; // gone
  }
  // The name is in parentheses and may contain spaces; fields after it are space-separated.
  const close = text.lastIndexOf(')');
  const name = text.slice(text.indexOf('(') + 1, close);
  const rest = text
    .slice(close + 2)
    .split(' ')
    .map(Number);
  // rest[0] is field 3 (state): utime is field 14, stime 15, cutime 16, cstime 17.
  const [utime = 0, stime = 0, cutime = 0, cstime = 0] = rest.slice(11, 15);
  return { name, ticks: utime + stime + (withChildren ? cutime + cstime : 0) };
}
