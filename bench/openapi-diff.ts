import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { type Change, diffDocuments } from '../src/lib/openapi-diff/index.ts';
import type { BenchConfig } from './support/config.ts';
import { median, type Suite, type SuiteReport } from './support/report.ts';

/**
 * Issue 26's change-engine benchmark: GitHub's REST description (@octokit/openapi, 13 MB as
 * shipped, 1,200 operations) compared with a copy carrying a few changes, one of them deep in a
 * schema that hundreds of operations use. Each run is a fresh process, so the figure includes the
 * engine's first, unoptimised run (what `kennel diff` in CI and a deploy pay) and its peak memory
 * is the process's own: the two parsed documents plus the comparison. The baseline, measured in
 * the same process, is JSON.parse of the two documents: what any comparison must at least do.
 * Target (the issue): under 2 s and under 500 MB. See docs/benchmarks.md.
 */

const BUDGET = { ms: 2000, rssMb: 500 };
const require = createRequire(import.meta.url);
const DOCUMENT = require.resolve('@octokit/openapi/generated/api.github.com.json');

type Json = Record<string, unknown>;

/** The few changes, and the rule each must be reported as (at least once). */
function applyChanges(document: Json): string[] {
  const paths = document.paths as Record<string, Record<string, Json>>;
  const schemas = (document.components as Record<string, Json>).schemas as Record<string, Json>;
  const at = <T>(node: unknown, ...keys: string[]): T =>
    keys.reduce((value, key) => (value as Json)[key], node) as T;
  delete at<Json>(paths, '/user/repos').post;
  const required = at<string[]>(schemas, 'simple-user', 'required');
  required.splice(required.indexOf('url'), 1);
  paths['/bench/added'] = { get: { operationId: 'bench/added', responses: { 200: { description: 'ok' } } } };
  at<string[]>(schemas, 'issue', 'properties', 'state_reason', 'enum').push('archived');
  at<string[]>(
    paths,
    '/repos/{owner}/{repo}/labels',
    'post',
    'requestBody',
    'content',
    'application/json',
    'schema',
    'required',
  ).push('description');
  return [
    'api-removed-without-deprecation',
    'response-property-became-optional',
    'endpoint-added',
    'response-property-enum-value-added',
    'request-property-became-required',
  ];
}

interface ChildFigures {
  parseMs: number;
  coldMs: number;
  warmMs: number;
  peakRssMb: number;
  changes: number;
  missing: string[];
}

/** One measured run, in this process (started by the suite with `child`). */
function child(): ChildFigures {
  const text = readFileSync(DOCUMENT, 'utf8');
  const parsedAt = performance.now();
  const base = JSON.parse(text) as Json;
  const revision = JSON.parse(text) as Json;
  const parseMs = performance.now() - parsedAt;
  const expected = applyChanges(revision);
  let started = performance.now();
  const changes: Change[] = diffDocuments(base, revision);
  const coldMs = performance.now() - started;
  started = performance.now();
  diffDocuments(base, revision);
  const warmMs = performance.now() - started;
  return {
    parseMs,
    coldMs,
    warmMs,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    changes: changes.length,
    missing: expected.filter((id) => !changes.some((change) => change.id === id)),
  };
}

if (import.meta.main && process.argv[2] === 'child') {
  process.stdout.write(JSON.stringify(child()));
}

export const openapiDiffSuite: Suite = {
  name: 'openapi-diff',
  description: "the change engine on GitHub's REST description against a copy with a few changes",
  async run(config: BenchConfig, log): Promise<SuiteReport> {
    const runs: ChildFigures[] = [];
    const problems: string[] = [];
    for (let round = 0; round < config.rounds; round++) {
      const { stdout } = await promisify(execFile)(config.node, [import.meta.filename, 'child'], {
        maxBuffer: 1 << 20,
      });
      const figures = JSON.parse(stdout) as ChildFigures;
      runs.push(figures);
      if (figures.missing.length > 0)
        problems.push(`run ${round + 1} did not report ${figures.missing.join(', ')}`);
      log(
        `run ${round + 1}: parse ${figures.parseMs.toFixed(0)} ms, diff ${figures.coldMs.toFixed(0)} ms (again ${figures.warmMs.toFixed(0)} ms), peak RSS ${figures.peakRssMb.toFixed(0)} MB, ${figures.changes} changes`,
      );
    }
    const parse = median(runs.map((r) => r.parseMs));
    const cold = median(runs.map((r) => r.coldMs));
    const warm = median(runs.map((r) => r.warmMs));
    const peak = Math.max(...runs.map((r) => r.peakRssMb));
    const size = (readFileSync(DOCUMENT).length / 1e6).toFixed(1);
    return {
      suite: 'openapi-diff',
      title: `Change engine: GitHub's REST description (${size} MB) against a copy with 5 changes, median of ${runs.length} processes`,
      table: {
        headers: ['measure', 'median', 'vs baseline'],
        right: [1, 2],
        rows: [
          ['baseline: JSON.parse of both documents', `${parse.toFixed(0)} ms`, '1.0x'],
          ['diff, first run in the process', `${cold.toFixed(0)} ms`, `${(cold / parse).toFixed(1)}x`],
          ['diff, second run', `${warm.toFixed(0)} ms`, `${(warm / parse).toFixed(1)}x`],
          ['peak RSS of the process (max of the runs)', `${peak.toFixed(0)} MB`, ''],
          ['changes reported', String(runs[0]?.changes ?? 0), ''],
        ],
      },
      checks: [
        {
          label: `diff under ${BUDGET.ms} ms`,
          passed: cold < BUDGET.ms,
          measured: `${cold.toFixed(0)} ms (first run)`,
        },
        {
          label: `peak memory under ${BUDGET.rssMb} MB`,
          passed: peak < BUDGET.rssMb,
          measured: `${peak.toFixed(0)} MB`,
        },
      ],
      problems,
      warnings: [],
      data: { runs },
    };
  },
};
