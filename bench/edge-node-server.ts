import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPlatformConfig } from '../src/config/index.ts';
import { parseSealingKey } from '../src/lib/sealed-box.ts';
import { assemblePlatform } from '../src/main/assemble-platform.ts';
import { seededOriginGuard } from '../test/support/origins.ts';

/** The node bench/edge-node.ts starts once the process has its runtime flags (see there). */
const env = process.env;
const required = (name: string): string => {
  const value = env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const databaseUrl = required('EDGE_DATABASE');
// The internal CA's root certificate is written to DATA_DIR: a directory of the run's own.
const dataDir = mkdtempSync(join(tmpdir(), 'kennel-edge-node-'));
const config = loadPlatformConfig({
  PLATFORM_DOMAIN: env.PLATFORM_DOMAIN ?? 'platform.test',
  LOG_LEVEL: 'silent',
  HOST: '127.0.0.1',
  HTTP_PORT: required('PORT'),
  HTTPS_PORT: required('HTTPS_PORT'),
  METRICS_PORT: 'off',
  DATA_DIR: dataDir,
  TRAFFIC_RECORDING: env.EDGE_TRAFFIC === 'on' ? 'on' : 'off',
  ...(env.TRAFFIC_FLUSH_SECONDS && { TRAFFIC_FLUSH_SECONDS: env.TRAFFIC_FLUSH_SECONDS }),
  ...(env.REQUEST_LOG_SIZE && { REQUEST_LOG_SIZE: env.REQUEST_LOG_SIZE }),
  ...(env.TRAFFIC_MAX_CALLERS && { TRAFFIC_MAX_CALLERS: env.TRAFFIC_MAX_CALLERS }),
});
// The `signin` suite floods sign-ins: SIGN_IN_LIMITS=off lifts the attempt limits so every
// attempt is checked (hashed), and SIGN_IN_THREADS / SIGN_IN_NICE set the hashing threads.
const numberOf = (name: string) => (env[name] ? Number(env[name]) : undefined);
const node = assemblePlatform(config, {
  storage: /^postgres(ql)?:\/\//.test(databaseUrl)
    ? { kind: 'postgres', url: databaseUrl }
    : { kind: 'sqlite', file: databaseUrl },
  keys: [parseSealingKey(required('EDGE_CERT_KEY'))],
  nodeId: 'bench',
  jobs: false,
  app: {
    signIn: {
      ...(env.SIGN_IN_LIMITS === 'off' && {
        limits: { accountFailures: Number.MAX_SAFE_INTEGER, addressAttempts: Number.MAX_SAFE_INTEGER },
      }),
      hasher: { threads: numberOf('SIGN_IN_THREADS'), nice: numberOf('SIGN_IN_NICE') },
    },
  },
  // The bench's origin runs on loopback: allowed as the operator lists its own origins.
  edge: async (ctx) => ({ guard: await seededOriginGuard(ctx) }),
  logProcessWarnings: false,
});
const { traffic } = await node.start();
const stats = createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  if (req.url === '/traffic') {
    const recorder = traffic?.recorder;
    res.end(JSON.stringify({ series: recorder?.seriesCount ?? 0, callers: recorder?.callerEntries ?? 0 }));
    return;
  }
  (globalThis as { gc?: () => void }).gc?.();
  res.end(JSON.stringify(process.memoryUsage()));
});
await new Promise<void>((resolve) => stats.listen(Number(required('STATS_PORT')), '127.0.0.1', resolve));

const stop = () => {
  stats.close();
  void node
    .stop()
    .finally(() => rmSync(dataDir, { recursive: true, force: true }))
    .finally(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
