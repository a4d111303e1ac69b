import { Agent, request } from 'node:http';

/**
 * The `signin` suite's flood: CLIENTS loops, each posting a sign-in and, once answered, the next,
 * until SIGTERM or MAX_SECONDS; then it waits for the answers in flight and prints a JSON summary
 * (answers by status, sign-in latencies) on stdout. Loopback only.
 *
 *   TARGET=http://127.0.0.1:<port> HOST=platform.test EMAIL=… PASSWORD=… CLIENTS=8 node bench/signin-flood.ts
 */
const env = process.env;
const target = new URL(env.TARGET ?? '');
if (!['127.0.0.1', 'localhost', '[::1]'].includes(target.hostname)) {
  throw new Error(`the sign-in flood only targets loopback, not ${target.hostname}`);
}
const clients = Number(env.CLIENTS ?? 8);
const maxSeconds = Number(env.MAX_SECONDS ?? 120);
const body = JSON.stringify({ email: env.EMAIL, password: env.PASSWORD });
const agent = new Agent({ keepAlive: true, maxSockets: clients });
const statuses: Record<string, number> = {};
const latenciesMs: number[] = [];
let stopping = false;

function signIn(): Promise<void> {
  return new Promise((resolve) => {
    const started = performance.now();
    const req = request(
      {
        host: target.hostname.replace(/^\[|\]$/g, ''),
        port: target.port,
        method: 'POST',
        path: '/api/v1/session',
        agent,
        headers: {
          host: env.HOST ?? 'platform.test',
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          const status = String(res.statusCode);
          statuses[status] = (statuses[status] ?? 0) + 1;
          latenciesMs.push(performance.now() - started);
          resolve();
        });
      },
    );
    req.on('error', (error) => {
      statuses[error.message] = (statuses[error.message] ?? 0) + 1;
      resolve();
    });
    req.end(body);
  });
}

async function loop(): Promise<void> {
  while (!stopping) await signIn();
}

process.once('SIGTERM', () => {
  stopping = true;
});
const deadline = setTimeout(() => {
  stopping = true;
}, maxSeconds * 1000);
const started = performance.now();
await Promise.all(Array.from({ length: clients }, loop));
clearTimeout(deadline);
agent.destroy();
const sorted = latenciesMs.sort((a, b) => a - b);
const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
process.stdout.write(
  `${JSON.stringify({
    seconds: (performance.now() - started) / 1000,
    statuses,
    answered: sorted.length,
    medianMs: at(0.5),
    p99Ms: at(0.99),
  })}\n`,
);
