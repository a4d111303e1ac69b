import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface WrkOptions {
  readonly url: string;
  readonly connections: number;
  readonly durationSeconds: number;
  /** taskset CPU list wrk is pinned to. */
  readonly cpu: string;
  /** wrk threads; one per pinned core is plenty for a single server core. */
  readonly threads?: number;
  /** A Lua script (for a method and body other than GET). */
  readonly script?: string;
  /** Request headers (`-H`), e.g. the Host a proxy routes by. */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface WrkResult {
  readonly requests: number;
  readonly requestsPerSecond: number;
  /** 99th percentile latency in milliseconds, from `--latency`. */
  readonly p99Ms: number;
  /** Answers with a status of 400 or more ("Non-2xx or 3xx responses"). */
  readonly non2xx: number;
  readonly socketErrors: { connect: number; read: number; write: number; timeout: number };
  /** wrk's own report, as printed. */
  readonly output: string;
}

/** Runs wrk pinned to `cpu` and parses its report. */
export async function runWrk(options: WrkOptions): Promise<WrkResult> {
  const args = [
    '-c',
    options.cpu,
    'wrk',
    '-t',
    String(options.threads ?? 1),
    '-c',
    String(options.connections),
    '-d',
    `${options.durationSeconds}s`,
    '--timeout',
    '5s',
    '--latency',
    ...(options.script ? ['-s', options.script] : []),
    ...Object.entries(options.headers ?? {}).flatMap(([name, value]) => ['-H', `${name}: ${value}`]),
    options.url,
  ];
  const { code, stdout, stderr } = await collect('taskset', args);
  if (code !== 0) {
    throw new Error(
      `wrk exited with ${code}: ${(stderr || stdout).trim() || 'no output'} (taskset ${args.join(' ')})`,
    );
  }
  return parseWrkOutput(stdout);
}

/** Writes a wrk Lua script sending `method` with a JSON body; returns its path. */
export function writeJsonRequestScript(dir: string, name: string, method: string, body: unknown): string {
  const path = join(dir, `${name}.lua`);
  const lua = (text: string) => `"${text.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
  writeFileSync(
    path,
    [
      `wrk.method = ${lua(method)}`,
      `wrk.body = ${lua(JSON.stringify(body))}`,
      `wrk.headers["Content-Type"] = "application/json"`,
      '',
    ].join('\n'),
  );
  return path;
}

const TIME_UNITS_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** wrk prints times as `712.00us`, `2.20ms`, `1.05s`, `1.00m`. */
export function parseWrkTime(text: string): number {
  const match = /^([\d.]+)(us|ms|s|m|h)$/.exec(text.trim());
  const factor = match ? TIME_UNITS_MS[match[2] as string] : undefined;
  if (!match || factor === undefined) throw new Error(`not a wrk time: ${JSON.stringify(text)}`);
  return Number(match[1]) * factor;
}

export function parseWrkOutput(output: string): WrkResult {
  const find = (pattern: RegExp, what: string): RegExpExecArray => {
    const match = pattern.exec(output);
    if (!match) throw new Error(`wrk report has no ${what}:\n${output}`);
    return match;
  };
  const p99 = find(/^\s*99%\s+(\S+)\s*$/m, '99% latency line (was --latency given?)');
  const rps = find(/^Requests\/sec:\s+([\d.]+)\s*$/m, 'Requests/sec line');
  const total = find(/^\s*(\d+) requests in /m, 'request count');
  const non2xx = /^\s*Non-2xx or 3xx responses:\s+(\d+)\s*$/m.exec(output);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  return {
    requests: Number(total[1]),
    requestsPerSecond: Number(rps[1]),
    p99Ms: parseWrkTime(p99[1] as string),
    non2xx: non2xx ? Number(non2xx[1]) : 0,
    socketErrors: {
      connect: socket ? Number(socket[1]) : 0,
      read: socket ? Number(socket[2]) : 0,
      write: socket ? Number(socket[3]) : 0,
      timeout: socket ? Number(socket[4]) : 0,
    },
    output,
  };
}

/** What makes a run unusable as a measurement, or null when it is clean. */
export function wrkProblem(result: WrkResult): string | null {
  const problems: string[] = [];
  if (result.requests === 0) problems.push('no request completed');
  if (result.non2xx > 0) problems.push(`${result.non2xx} non-2xx/3xx responses`);
  const { connect, read, write, timeout } = result.socketErrors;
  if (connect + read + write + timeout > 0) {
    problems.push(`socket errors: connect ${connect}, read ${read}, write ${write}, timeout ${timeout}`);
  }
  return problems.length > 0 ? problems.join('; ') : null;
}

function collect(command: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', (error) =>
      reject(
        new Error(
          `cannot run ${command} (${error.message}); wrk and taskset are needed: apt-get install -y wrk util-linux`,
        ),
      ),
    );
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}
