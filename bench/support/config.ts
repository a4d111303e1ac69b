/**
 * Benchmark settings, read once from the environment. Every suite gets the same values, so one
 * `BENCH_DURATION=3 BENCH_ROUNDS=1 npm run bench` shortens the whole run.
 */
export interface BenchConfig {
  /** Seconds of each measured wrk run. */
  readonly durationSeconds: number;
  /** Measured rounds; each round runs every target on every endpoint once, interleaved. */
  readonly rounds: number;
  /** Seconds of the unmeasured run each target gets on each endpoint before the rounds. */
  readonly warmupSeconds: number;
  /** Open connections of the load generator. */
  readonly connections: number;
  /** CPU list (taskset -c) of the servers under test. */
  readonly serverCpu: string;
  /** CPU list (taskset -c) of the load generator. */
  readonly loadCpu: string;
  /** Admin URL of the PostgreSQL server, or null to leave PostgreSQL out. */
  readonly postgresUrl: string | null;
  /** The Node.js binary the servers run on: the one running the benchmark (Node 24). */
  readonly node: string;
  /** CPU (in cores) other processes may use during a run before it counts as disturbed. */
  readonly noiseLimitCores: number;
  /** Seconds to wait for the machine to calm down before each run. */
  readonly quietWaitSeconds: number;
  /** How many times a disturbed run is measured again. */
  readonly retries: number;
  /** Where to write the results as JSON, if anywhere. */
  readonly jsonOutput: string | null;
  /** Exit with status 1 when a target is missed (measurement failures always do). */
  readonly enforceTargets: boolean;
  /** Certificates in the store for the `tls` suite's many-certificate edge. */
  readonly tlsCertificates: number;
  /** Client processes of the TLS handshake load (all pinned to the load CPU). */
  readonly tlsClients: number;
  /** Verify → certificate served runs of the `acme` suite. */
  readonly acmeRuns: number;
}

export const BENCH_SETTINGS = [
  ['BENCH_DURATION', 'seconds of each measured wrk run', '5'],
  ['BENCH_ROUNDS', 'measured rounds (targets and endpoints interleaved in each)', '5'],
  ['BENCH_WARMUP', 'seconds of unmeasured warm-up per target and endpoint (0 for none)', '2'],
  ['BENCH_CONNECTIONS', 'wrk connections', '50'],
  ['BENCH_SERVER_CPU', 'taskset CPU list of the servers under test', '0'],
  ['BENCH_LOAD_CPU', 'taskset CPU list of wrk', '1'],
  [
    'BENCH_POSTGRES_URL',
    'PostgreSQL admin URL; "off" leaves PostgreSQL out',
    'postgres://root@127.0.0.1:5432/test',
  ],
  ['BENCH_NOISE_LIMIT', 'CPU (cores) other processes may use during a run before it is disturbed', '0.1'],
  ['BENCH_QUIET_WAIT', 'seconds to wait for other processes to calm down before each run', '10'],
  ['BENCH_RETRIES', 'times a disturbed run is measured again', '1'],
  ['BENCH_JSON', 'also write the results to this JSON file', ''],
  ['BENCH_ENFORCE', '1: exit with status 1 when a target is missed', ''],
  ['BENCH_TLS_CERTIFICATES', 'tls suite: certificates in the store of the many-certificate edge', '10000'],
  ['BENCH_TLS_CLIENTS', 'tls suite: client processes making handshakes', '16'],
  ['BENCH_ACME_RUNS', 'acme suite: Verify -> certificate served runs', '5'],
] as const;

type SettingName = (typeof BENCH_SETTINGS)[number][0];

export function loadBenchConfig(env: Record<string, string | undefined>): BenchConfig {
  const problems: string[] = [];
  const raw = (name: SettingName): string => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    return BENCH_SETTINGS.find(([n]) => n === name)?.[2] ?? '';
  };
  const number = (name: SettingName, min: number, max: number, integer: boolean): number => {
    const text = raw(name);
    const value = Number(text);
    if (!/^\d+(\.\d+)?$/.test(text) || value < min || value > max || (integer && !Number.isInteger(value))) {
      problems.push(
        `${name}=${JSON.stringify(text)}: expected ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}`,
      );
    }
    return value;
  };
  const cpuList = (name: SettingName): string => {
    const text = raw(name);
    if (!/^\d+([-,]\d+)*$/.test(text))
      problems.push(`${name}=${JSON.stringify(text)}: expected a CPU list like 0 or 0-1`);
    return text;
  };
  const postgres = raw('BENCH_POSTGRES_URL');
  const config: BenchConfig = {
    durationSeconds: number('BENCH_DURATION', 1, 600, true),
    rounds: number('BENCH_ROUNDS', 1, 50, true),
    warmupSeconds: number('BENCH_WARMUP', 0, 600, true),
    connections: number('BENCH_CONNECTIONS', 1, 10_000, true),
    serverCpu: cpuList('BENCH_SERVER_CPU'),
    loadCpu: cpuList('BENCH_LOAD_CPU'),
    postgresUrl: postgres === 'off' || postgres === 'none' ? null : postgres,
    node: process.execPath,
    noiseLimitCores: number('BENCH_NOISE_LIMIT', 0, 64, false),
    quietWaitSeconds: number('BENCH_QUIET_WAIT', 0, 3600, true),
    retries: number('BENCH_RETRIES', 0, 10, true),
    jsonOutput: raw('BENCH_JSON') || null,
    enforceTargets: raw('BENCH_ENFORCE') === '1',
    tlsCertificates: number('BENCH_TLS_CERTIFICATES', 2, 100_000, true),
    tlsClients: number('BENCH_TLS_CLIENTS', 1, 64, true),
    acmeRuns: number('BENCH_ACME_RUNS', 1, 100, true),
  };
  if (config.postgresUrl !== null && !/^postgres(ql)?:\/\//.test(config.postgresUrl)) {
    problems.push(
      `BENCH_POSTGRES_URL=${JSON.stringify(config.postgresUrl)}: expected a postgres:// URL or "off"`,
    );
  }
  if (problems.length > 0) throw new Error(`Invalid benchmark settings:\n  - ${problems.join('\n  - ')}`);
  return config;
}
