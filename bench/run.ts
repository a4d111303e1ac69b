import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { acmeSuite } from './acme.ts';
import { domainsSuite } from './domains.ts';
import { edgeSuite } from './edge.ts';
import { edgeHttp2Suite } from './edge-http2.ts';
import { edgeInstructionsSuite } from './edge-instructions.ts';
import { trafficCostSuite } from './edge-traffic-cost.ts';
import { openapiDiffSuite } from './openapi-diff.ts';
import { petstoreSuite } from './petstore.ts';
import { referenceSuite } from './reference.ts';
import { referenceCandidatesSuite } from './reference-candidates.ts';
import { signinSuite } from './signin.ts';
import { BENCH_SETTINGS, type BenchConfig, loadBenchConfig } from './support/config.ts';
import { renderChecks, renderTable, type Suite, type SuiteReport } from './support/report.ts';
import { stopAllServers } from './support/servers.ts';
import { tlsSuite } from './tls.ts';
import { trafficSoakSuite } from './traffic-soak.ts';
import { webhooksSuite } from './webhooks.ts';

/**
 * `npm run bench [-- <suite>...]`: runs the benchmark suites (all by default) and prints a summary.
 * Exit status 1 when a measurement failed (or, with BENCH_ENFORCE=1, when a target was missed).
 * See docs/benchmarks.md.
 */
const SUITES: readonly Suite[] = [
  petstoreSuite,
  domainsSuite,
  edgeSuite,
  edgeHttp2Suite,
  edgeInstructionsSuite,
  tlsSuite,
  acmeSuite,
  referenceSuite,
  referenceCandidatesSuite,
  webhooksSuite,
  signinSuite,
  openapiDiffSuite,
  trafficSoakSuite,
  trafficCostSuite,
];

function usage(): string {
  return [
    'Usage: npm run bench [-- <suite>...]',
    '',
    'Suites:',
    ...SUITES.map(
      (s) => `  ${s.name.padEnd(10)} ${s.description}${s.onlyWhenNamed ? ' (only when named)' : ''}`,
    ),
    '',
    'Environment:',
    ...BENCH_SETTINGS.map(
      ([name, description, fallback]) =>
        `  ${name.padEnd(19)} ${description}${fallback ? ` (default ${fallback})` : ''}`,
    ),
  ].join('\n');
}

function machine(config: BenchConfig): string[] {
  const tool = (command: string, args: string[]) => {
    try {
      return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
    } catch (error) {
      // `wrk -v` prints its version and exits with 1.
      const out = (error as { stdout?: string }).stdout?.trim();
      if (out) return out;
      throw new Error(`${command} is needed to run the benchmarks (apt-get install -y wrk util-linux)`);
    }
  };
  const wrk = tool('wrk', ['-v']).split('\n')[0] ?? 'wrk';
  tool('taskset', ['-V']);
  let commit = 'not a git checkout';
  try {
    const git = (...args: string[]) =>
      execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    commit = `commit ${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--', 'src').length > 0 ? ' with uncommitted changes in src/' : ''}`;
  } catch {}
  return [
    `CPU: ${cpus().length} x ${cpus()[0]?.model ?? 'unknown'} (nproc ${tool('nproc', [])})`,
    `Node.js ${process.version} (${config.node}), ${wrk}, ${commit}`,
    `servers on CPU ${config.serverCpu}, wrk on CPU ${config.loadCpu}, ${config.connections} connections, ` +
      `${config.rounds} rounds x ${config.durationSeconds} s, warm-up ${config.warmupSeconds} s`,
  ];
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  if (args.includes('-h') || args.includes('--help')) {
    console.log(usage());
    return 0;
  }
  const unknown = args.filter((a) => !SUITES.some((s) => s.name === a));
  if (unknown.length > 0) {
    console.error(`Unknown suite: ${unknown.join(', ')}\n\n${usage()}`);
    return 2;
  }
  // `edge` brings its HTTP/2 part along (issue 29): one run compares both protocols.
  const wanted = args.includes('edge') ? [...args, edgeHttp2Suite.name] : args;
  const selected =
    args.length === 0
      ? SUITES.filter((s) => !s.onlyWhenNamed)
      : SUITES.filter((s) => wanted.includes(s.name));
  const config = loadBenchConfig(process.env);
  const about = machine(config);
  for (const line of about) console.log(line);

  const reports: SuiteReport[] = [];
  const failures: string[] = [];
  for (const suite of selected) {
    console.log(`\n== ${suite.name}: ${suite.description}`);
    const started = Date.now();
    try {
      const report = await suite.run(config, (line) => console.log(`[${suite.name}] ${line}`));
      reports.push(report);
      console.log(`[${suite.name}] done in ${Math.round((Date.now() - started) / 1000)} s`);
    } catch (error) {
      failures.push(`${suite.name}: ${(error as Error).stack ?? error}`);
      console.error(`[${suite.name}] FAILED: ${(error as Error).message}`);
    }
  }

  console.log('\n== Summary');
  for (const line of about) console.log(line);
  for (const report of reports) {
    console.log(`\n${report.title}\n\n${renderTable(report.table)}`);
    for (const more of report.moreTables ?? []) console.log(`\n${more.title}\n\n${renderTable(more.table)}`);
    console.log(`\n${renderChecks(report.checks)}`);
    for (const problem of report.problems) console.log(`MEASUREMENT FAILED  ${problem}`);
    for (const warning of report.warnings) console.log(`DISTURBED  ${warning}`);
  }
  for (const failure of failures) console.log(`\nSUITE FAILED  ${failure}`);

  if (config.jsonOutput) {
    writeFileSync(
      config.jsonOutput,
      `${JSON.stringify({ machine: about, config, reports, failures, at: new Date().toISOString() }, null, 2)}\n`,
    );
    console.log(`\nresults written to ${config.jsonOutput}`);
  }
  const invalid = failures.length > 0 || reports.some((r) => r.problems.length > 0);
  const missed = reports.some((r) => r.checks.some((c) => !c.passed));
  return invalid || (config.enforceTargets && missed) ? 1 : 0;
}

const onSignal = (signal: NodeJS.Signals) => {
  console.error(`\n${signal}: stopping the servers`);
  void stopAllServers().finally(() => process.exit(130));
};
process.once('SIGINT', onSignal);
process.once('SIGTERM', onSignal);

let status: number;
try {
  status = await main();
} catch (error) {
  console.error((error as Error).message);
  status = 1;
} finally {
  await stopAllServers();
}
process.exitCode = status;
