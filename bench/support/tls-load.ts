import { spawn, spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

/**
 * The `tls` suite's handshake client (tls-handshakes.c, built here with cc): why C and not
 * `openssl s_time` or a Node.js client is said at the top of the C file and in docs/benchmarks.md.
 */
const ROOT = resolve(import.meta.dirname, '..', '..');

export type HandshakeMode = 'full' | 'resumed' | 'once';

export interface HandshakeRun {
  /** New sessions completed. */
  readonly full: number;
  /** Offered sessions the server resumed. */
  readonly resumed: number;
  /** Offered sessions the server did not resume (a full handshake instead). */
  readonly unresumed: number;
  readonly failed: number;
  /** Length of the timed part (the slowest worker's). */
  readonly seconds: number;
}

/** The client's last line, `full N resumed N unresumed N failed N seconds S`; null if absent. */
export function parseHandshakeOutput(output: string): HandshakeRun | null {
  const match = /^full (\d+) resumed (\d+) unresumed (\d+) failed (\d+) seconds (\d+(?:\.\d+)?)$/m.exec(
    output,
  );
  if (!match) return null;
  const [full, resumed, unresumed, failed, seconds] = match.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
  ];
  return { full, resumed, unresumed, failed, seconds };
}

/** Compiles the C load generator (bench/support/tls-handshakes.c). */
export function buildLoadGenerator(work: string): string {
  const binary = join(work, 'tls-handshakes');
  const result = spawnSync(
    'cc',
    ['-O2', '-o', binary, join(ROOT, 'bench', 'support', 'tls-handshakes.c'), '-lssl', '-lcrypto'],
    { encoding: 'utf8' },
  );
  if (result.error || result.status !== 0) {
    throw new Error(
      `the tls suite builds its handshake client from bench/support/tls-handshakes.c and needs a C compiler and the OpenSSL headers (apt-get install -y gcc libssl-dev): ${result.error?.message ?? result.stderr.trim()}`,
    );
  }
  return binary;
}

export function runHandshakes(
  binary: string,
  cpu: string,
  args: { port: number; seconds: number; workers: number; mode: HandshakeMode; namesFile: string },
  onStart: () => void = () => {},
): Promise<HandshakeRun> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(
      'taskset',
      [
        '-c',
        cpu,
        binary,
        String(args.port),
        String(args.seconds),
        String(args.workers),
        args.mode,
        args.namesFile,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      const started = !out.includes('primed\n');
      out += c;
      if (started && out.includes('primed\n')) onStart();
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      err += c;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const run = code === 0 ? parseHandshakeOutput(out) : null;
      if (run === null) reject(new Error(`tls-handshakes exited with ${code}: ${(err || out).trim()}`));
      else resolvePromise(run);
    });
  });
}
