import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { after, before } from 'node:test';
import type { Dialect, StorageLocation } from '../../src/storage/index.ts';
import { createTestStorage, type TestStorage } from './databases.ts';

const ROOT = join(import.meta.dirname, '..', '..');
/** The Node 24 the project installs (npm scripts put it first on PATH; tests spawn it directly). */
export const NODE = process.execPath;

export interface RunningProcess {
  readonly url: string;
  readonly child: ChildProcess;
  /** Sends a signal and waits for the process to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Everything the process wrote, for failure messages. */
  output(): string;
}

/** Where a process started with `storageEnv(location)` keeps a service's data. */
export function processStorage(location: StorageLocation, sqliteFileName: string): StorageLocation {
  return location.kind === 'sqlite'
    ? { kind: 'sqlite', file: join(location.file, '..', sqliteFileName) }
    : location;
}

/** The environment that points a process at a test's storage. */
export function storageEnv(location: StorageLocation): Record<string, string> {
  if (location.kind === 'sqlite') return { DATA_DIR: join(location.file, '..') };
  const url = new URL(location.url);
  if (location.schema) url.searchParams.set('options', `-c search_path=${location.schema}`);
  return { DATABASE_URL: url.toString() };
}

/**
 * For a describe whose tests run entry points as processes on one storage: `storage` is made fresh
 * before its tests; after them the process a test left in `server` is killed and the storage dropped.
 */
export function processSuite(dialect: Dialect) {
  const suite: { storage: TestStorage; server: RunningProcess | undefined } = {
    storage: undefined as unknown as TestStorage,
    server: undefined,
  };
  before(async () => {
    suite.storage = await createTestStorage(dialect);
  });
  after(async () => {
    await suite.server?.stop('SIGKILL');
    await suite.storage?.drop();
  });
  return suite;
}

/**
 * Runs an entry point of src/main with `args` to its exit, with PATH and `env` only: its exit code
 * and what it printed (for commands, and starts that fail before listening).
 */
export function runToExit(entry: string, args: readonly string[], env: Record<string, string>) {
  const child = spawn(NODE, [join(ROOT, 'src', 'main', entry), ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return outputOf(child);
}

/** What a spawned process printed, and its exit code, once it has exited and closed its output. */
export function outputOf(
  child: ChildProcess,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface StartOptions {
  /** A command the process runs under, e.g. `['taskset', '-c', '0']`. */
  readonly prefix?: readonly string[];
  /** Flags for Node itself, before the entry point. */
  readonly nodeArgs?: readonly string[];
}

/**
 * Starts an entry point of src/main as a child process on a free port and waits until it logs
 * the address it listens on.
 */
export async function startProcess(
  entry: string,
  env: Record<string, string>,
  options: StartOptions = {},
): Promise<RunningProcess> {
  const [command = NODE, ...args] = [
    ...(options.prefix ?? []),
    NODE,
    ...(options.nodeArgs ?? []),
    join(ROOT, 'src', 'main', entry),
  ];
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = once(child, 'exit');
  const url = await new Promise<string>((resolve, reject) => {
    // A start that misses the limit is killed, so a slow machine never leaves it running. Generous:
    // a first start migrates a fresh database while other suites load the machine.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${entry} did not start in 60 s:\n${output}`));
    }, 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /"address":"(http:\/\/[^"]+)"/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${entry} exited with ${code} before listening:\n${output}`));
    });
  });
  return {
    url,
    child,
    output: () => output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
