import { availableParallelism } from 'node:os';

/** Node's flag for the size of V8's worker pool (garbage collection helpers, compilers). */
export const ONE_HELPER_THREAD = '--v8-pool-size=1';

/** Flags by which an operator has already chosen V8's threads (V8 takes `_` for `-`). */
const DECIDES_THREADS = /^--(v8[-_]pool[-_]size|(no-)?single[-_]threaded([-_]gc)?)(=|$)/;

/**
 * The flags a server adds for itself, given the cores it may run on and the flags it was started
 * with (command line and NODE_OPTIONS). V8 marks, scavenges and sweeps with a pool of helper
 * threads, four by default. On one core they cannot run beside the event loop, only instead of
 * it: the scheduler gives each runnable helper a slice in turn, and a major collection stalled
 * the loop 10–30 ms while the loop itself ran 3–6 ms of it. With one helper the loop waits at
 * most one slice at a time, and marking still runs off the loop's thread (docs/decisions/runtime.md).
 * An operator who named the pool or single-threaded collection has decided.
 */
export function helperThreadFlags(cores: number, startFlags: readonly string[]): string[] {
  if (cores !== 1) return [];
  return startFlags.some((flag) => DECIDES_THREADS.test(flag)) ? [] : [ONE_HELPER_THREAD];
}

/**
 * Replaces this process with the same command plus the flags `helperThreadFlags` asks for (same
 * PID, so a supervisor's signals and exit codes are unchanged). The pool is sized only when Node
 * starts, hence the relaunch. Call it before anything else is loaded; it returns when nothing is
 * needed, or when the relaunch failed (a warning says so and the server starts as it is: a slower
 * tail is better than no server).
 */
export function relaunchForCores(
  options: {
    readonly cores?: number;
    /** The flags Node was started with (default: the command line's and NODE_OPTIONS'). */
    readonly startFlags?: readonly string[];
    readonly execve?: typeof process.execve;
  } = {},
): void {
  const {
    cores = availableParallelism(),
    startFlags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean)],
    execve = process.execve,
  } = options;
  const flags = helperThreadFlags(cores, startFlags);
  if (flags.length === 0 || typeof execve !== 'function') return;
  try {
    execve(
      process.execPath,
      [process.execPath, ...flags, ...process.execArgv, ...process.argv.slice(1)],
      process.env,
    );
  } catch (error) {
    process.emitWarning(
      `could not restart with ${flags.join(' ')} for this one-core machine (${(error as Error).message}); starting without it`,
      { code: 'KENNEL_RELAUNCH_FAILED' },
    );
  }
}
