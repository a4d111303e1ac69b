import { availableParallelism } from 'node:os';

/** The V8 flag that keeps garbage collection on the thread that runs JavaScript. */
export const SINGLE_THREADED_GC = '--single-threaded-gc';

/** `--single-threaded-gc`, `--no-single-threaded-gc`, `--single-threaded` (V8 takes `_` for `-`). */
const DECIDES_GC_THREADS = /^--(no-)?single[-_]threaded([-_]gc)?(=|$)/;

/**
 * The V8 flags a server adds for itself, given the cores it may run on and the flags it was
 * started with. V8 marks, scavenges and sweeps with helper threads (four by default). On one
 * core they cannot run beside the event loop, only instead of it: the scheduler gives each a
 * slice in turn, and every major collection stalls the loop for 10–30 ms while the loop itself
 * ran 3–6 ms of it (see docs/decisions.md). With one core, the collector runs on the main
 * thread in small steps instead. An operator who named the flag either way has decided.
 */
export function gcFlagsFor(cores: number, execArgv: readonly string[]): string[] {
  if (cores !== 1) return [];
  return execArgv.some((arg) => DECIDES_GC_THREADS.test(arg)) ? [] : [SINGLE_THREADED_GC];
}

/**
 * Replaces this process with the same command plus the flags `gcFlagsFor` asks for (same PID,
 * so a supervisor's signals and exit codes are unchanged). V8 reads these flags only at start,
 * hence the relaunch. Call it before anything else is loaded; it returns when nothing is needed.
 */
export function relaunchForCores(): void {
  const flags = gcFlagsFor(availableParallelism(), process.execArgv);
  if (flags.length === 0 || typeof process.execve !== 'function') return;
  process.execve(
    process.execPath,
    [process.execPath, ...flags, ...process.execArgv, ...process.argv.slice(1)],
    process.env,
  );
}
