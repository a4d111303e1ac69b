import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** A server under test: a child process pinned to its CPU(s), listening on `url`. */
export interface RunningServer {
  readonly name: string;
  readonly pid: number;
  /** Base URL, without a trailing slash. */
  readonly url: string;
  /** SIGTERM, then SIGKILL if it has not exited after a grace period; resolves once it has exited. */
  stop(): Promise<void>;
}

export interface ServerSpec {
  readonly name: string;
  /** Node.js binary; the script and its arguments follow in `args`. */
  readonly node: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** taskset CPU list. */
  readonly cpu: string;
  /** Passed to the server as PORT (and HOST=127.0.0.1). */
  readonly port: number;
  readonly env: Readonly<Record<string, string>>;
  /** A path that answers (any status) once the server is ready. */
  readonly readyPath: string;
  readonly readyTimeoutMs?: number;
}

const running = new Set<RunningServer>();

/** Starts `taskset -c <cpu> <node> <args>` and waits until it answers HTTP. */
export async function startServer(spec: ServerSpec): Promise<RunningServer> {
  // taskset execs the command, so the child's pid is the server's pid.
  const child = spawn('taskset', ['-c', spec.cpu, spec.node, ...spec.args], {
    cwd: spec.cwd,
    env: { ...process.env, ...spec.env, PORT: String(spec.port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => resolve(signal ? `signal ${signal}` : `code ${code}`));
    child.once('error', (error) => resolve(`spawn error: ${error.message}`));
  });
  const url = `http://127.0.0.1:${spec.port}`;
  const server: RunningServer = {
    name: spec.name,
    pid: child.pid ?? -1,
    url,
    stop: () => stopChild(child, exited).finally(() => running.delete(server)),
  };
  running.add(server);
  const outcome = await Promise.race([
    waitForHttp(`${url}${spec.readyPath}`, spec.readyTimeoutMs ?? 30_000).then(() => null),
    exited.then((how) => `exited (${how}) before answering`),
  ]).catch((error: Error) => error.message);
  if (outcome !== null) {
    await server.stop();
    const tail = stderr.trim() ? `\n${stderr.trim()}` : '';
    throw new Error(`${spec.name} did not start: ${outcome}${tail}`);
  }
  return server;
}

/** Stops every server still running (on the way out, including after an error). */
export async function stopAllServers(): Promise<void> {
  await Promise.all([...running].map((server) => server.stop()));
}

async function stopChild(child: ChildProcess, exited: Promise<string>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  child.kill('SIGTERM');
  const graceful = await Promise.race([exited.then(() => true), sleep(5000).then(() => false)]);
  if (!graceful) {
    child.kill('SIGKILL');
    await exited;
  }
}

async function waitForHttp(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
      await response.arrayBuffer();
      return;
    } catch (error) {
      if (Date.now() > deadline)
        throw new Error(`no answer at ${url} after ${timeoutMs} ms (${(error as Error).message})`);
      await sleep(100);
    }
  }
}

/** A TCP port free on 127.0.0.1 right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * The Node.js flags `npm start` runs the platform with (package.json's start script), so the
 * benchmarks' edge node runs as production does; the one place they are written is that script.
 */
export const START_FLAGS: readonly string[] = (() => {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    scripts: { start: string };
  };
  return manifest.scripts.start.split(/\s+/).filter((token) => token.startsWith('--'));
})();
