import type { BenchConfig } from './config.ts';

/** What a suite hands back to bench/run.ts for the summary. */
export interface SuiteReport {
  readonly suite: string;
  readonly title: string;
  readonly table: Table;
  /** Further tables, printed after the main one. */
  readonly moreTables?: readonly { readonly title: string; readonly table: Table }[];
  readonly checks: readonly Check[];
  /** Measurements that cannot be trusted (errors, non-2xx answers…); any makes the run fail. */
  readonly problems: readonly string[];
  /** Measurements to take with care (the machine was busy with something else). */
  readonly warnings: readonly string[];
  /** Raw figures for BENCH_JSON. */
  readonly data: unknown;
}

/** A target from the issue and whether this run met it. */
export interface Check {
  readonly label: string;
  readonly passed: boolean;
  readonly measured: string;
}

export interface Table {
  readonly headers: readonly string[];
  readonly rows: readonly (readonly string[])[];
  /** Columns aligned right (numbers). */
  readonly right?: readonly number[];
}

/** A benchmark suite: `npm run bench -- <name>` runs it alone. */
export interface Suite {
  readonly name: string;
  readonly description: string;
  /** Run only when named (`npm run bench -- NAME`): it installs a lot or takes long. */
  readonly onlyWhenNamed?: boolean;
  run(config: BenchConfig, log: (line: string) => void): Promise<SuiteReport>;
}

export function renderTable(table: Table): string {
  const widths = table.headers.map((header, i) =>
    Math.max(header.length, ...table.rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    `| ${cells
      .map((cell, i) =>
        table.right?.includes(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0),
      )
      .join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (table.right?.includes(i) ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  return [line(table.headers), rule, ...table.rows.map(line)].join('\n');
}

export function renderChecks(checks: readonly Check[]): string {
  return checks.map((c) => `${c.passed ? 'PASS' : 'FAIL'}  ${c.label}: ${c.measured}`).join('\n');
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export const formatRate = (rps: number) =>
  Number.isFinite(rps) ? Math.round(rps).toLocaleString('en-US') : '-';
export const formatMs = (ms: number) => (Number.isFinite(ms) ? `${ms.toFixed(2)} ms` : '-');
export const formatRatio = (ratio: number) => (Number.isFinite(ratio) ? `${(ratio * 100).toFixed(1)}%` : '-');
