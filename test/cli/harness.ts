import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { CliIo } from '../../src/cli/io.ts';
import { run } from '../../src/cli/main.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import type { Actor } from '../../src/platform/context.ts';
import type { Dialect } from '../../src/storage/index.ts';
import { startTestNode, type TestNode } from '../support/test-node.ts';

export const ROOT = join(import.meta.dirname, '..', '..');
export const BIN = join(ROOT, 'bin', 'kennel.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Variables on top of PATH, HOME and TZ (nothing else of the test's environment leaks in). */
  env?: Record<string, string>;
  /** Written to stdin, which is then closed (stdin is empty otherwise). */
  input?: string;
  /** Called with stderr as it grows (to act while the command runs). */
  onStderr?: (soFar: string, child: ChildProcess | undefined) => void;
  /** Called with stdout as it grows (to act on what a following command printed). */
  onStdout?: (soFar: string, child: ChildProcess | undefined) => void;
  timeoutMs?: number;
  /** In process only: stdout says it is a terminal (for colours). */
  tty?: boolean;
}

/**
 * Runs one command line in this process through the CLI's `run(argv, io)`, with the environment
 * the spawned CLI would get (PATH, TZ and `env`, nothing else of the test's), stdin holding
 * `input`, and collects what it printed. The `child` of the callbacks is undefined here.
 */
export async function kennel(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const stream = (onText: (text: string) => void, isTTY = false) => ({
    write: (text: string) => onText(String(text)),
    isTTY,
  });
  const io: CliIo = {
    stdout: stream((text) => {
      stdout += text;
      options.onStdout?.(stdout, undefined);
    }, options.tty),
    stderr: stream((text) => {
      stderr += text;
      options.onStderr?.(stderr, undefined);
    }),
    stdin: Readable.from(options.input === undefined ? [] : [options.input]) as unknown as CliIo['stdin'],
    env: { PATH: process.env.PATH ?? '', TZ: 'UTC', ...options.env },
  };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`kennel ${args.join(' ')} did not finish:\n${stdout}\n${stderr}`)),
      options.timeoutMs ?? 60_000,
    );
  });
  try {
    const code = await Promise.race([run(args, io), timeout]);
    return { code, stdout, stderr };
  } finally {
    clearTimeout(timer);
  }
}

/** `kennel …` in process with `env`, as a function of its words: `const k = kennelIn(env); await k('whoami')`. */
export function kennelIn(env: Record<string, string>, options: Omit<CliOptions, 'env'> = {}) {
  return (...argv: string[]) => kennel(argv, { ...options, env });
}

/**
 * Runs bin/kennel.js in a child process, as a user would, and collects what it printed: for what
 * only a process has (NODE_EXTRA_CA_CERTS, signals, a command killed while it follows a stream,
 * the bin script itself). Everything else runs in process (`kennel`).
 */
export function kennelProcess(args: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', TZ: 'UTC', ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    options.onStdout?.(stdout, child);
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    options.onStderr?.(stderr, child);
  });
  child.stdin.end(options.input ?? '');
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`kennel ${args.join(' ')} did not finish:\n${stdout}\n${stderr}`));
    }, options.timeoutMs ?? 60_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A temporary directory for credentials (KENNEL_CONFIG_DIR) or files. */
export function tempDir(prefix = 'kennel-cli-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export const USERS = {
  admin: { email: 'admin@x.test', password: 'admin password 1' },
  owner: { email: 'owner@x.test', password: 'owner password 1' },
  member: { email: 'member@x.test', password: 'member password 1' },
} as const;

export interface CliServer {
  /** The node: its context and clock set up state through the platform's modules. */
  readonly platform: TestNode;
  /** The accounts of USERS. */
  readonly actors: Readonly<Record<keyof typeof USERS, Actor>>;
  readonly app: FastifyInstance;
  readonly url: string;
  close(): Promise<void>;
}

/**
 * A platform node as `npm start` assembles it (startTestNode, `env` over its settings) on a fresh
 * database, without its periodic jobs (a test runs the one it needs), with three accounts. The CLI
 * is tested at 127.0.0.1, [::1] and localhost, and a node's edge serves the management app only at
 * the platform domain: the node's own app also listens on a free loopback port, which is `url`.
 * `host` '::' listens on every address, IPv4 and IPv6 (the url is then `http://[::]:port`).
 */
export async function startCliServer(
  dialect: Dialect,
  env: Record<string, string> = {},
  host: '127.0.0.1' | '::' = '127.0.0.1',
): Promise<CliServer> {
  const node = await startTestNode(dialect, { env, jobs: false });
  try {
    const { app } = node.node;
    // Closed with the node (its management app stops with it).
    const url = await app.listen({ port: 0, host });
    const actors = {
      admin: await createUser(node.ctx, { ...USERS.admin, isAdmin: true }),
      owner: await createUser(node.ctx, USERS.owner),
      member: await createUser(node.ctx, USERS.member),
    };
    return { platform: node, actors, app, url, close: () => node.stop() };
  } catch (error) {
    await node.stop();
    throw error;
  }
}
