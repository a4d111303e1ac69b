import type { ErrorSpec } from '../../src/lib/api-error.ts';
import { type AnyOperation, errorCodesOf } from '../../src/lib/http-api/index.ts';

/**
 * An error page (docs/errors.md, docs/platform-api.md) lists every code of a catalog with its
 * status, meaning and the operations that declare it, and nothing else. These checks keep the
 * page, the catalog and the operations in step.
 */
export const HEADER = /^\|\s*code\s*\|\s*HTTP status\s*\|\s*meaning\s*\|\s*operations\s*\|$/;
export const HEADER_LINE = new RegExp(HEADER.source, 'm');
/** Codes no operation declares because they answer requests that reach no operation. */
const ROUTE_CODES = new Set(['route_not_found', 'method_not_allowed']);
export const ROUTE_CELL = 'any unknown path / method';
/** What a row says for a code that no operation declares (besides the two above). */
const NONE_DECLARED = /^none declared\b/;

interface Row {
  code: string;
  status: number;
  meaning: string;
  cell: string;
}

export function parseTable(markdown: string): { rows: Row[]; problems: string[] } {
  const lines = markdown.split('\n').map((l) => l.trim());
  const start = lines.findIndex((l) => HEADER.test(l));
  if (start === -1)
    return { rows: [], problems: ['no table with columns code | HTTP status | meaning | operations'] };
  const rows: Row[] = [];
  const problems: string[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const cells = line
      .slice(1, line.endsWith('|') ? -1 : undefined)
      .split(/(?<!\\)\|/)
      .map((c) => c.trim());
    const code = /^`([a-z][a-z0-9_]*)`$/.exec(cells[0] ?? '')?.[1];
    if (cells.length !== 4 || code === undefined || !/^\d{3}$/.test(cells[1] ?? '')) {
      problems.push(`malformed row: ${line}`);
      continue;
    }
    rows.push({ code, status: Number(cells[1]), meaning: cells[2] ?? '', cell: cells[3] ?? '' });
  }
  return { rows, problems };
}

/** Every disagreement between the page, the catalog and what the operations declare. */
export function checkErrorDoc(
  markdown: string,
  catalog: Readonly<Record<string, ErrorSpec>>,
  declared: ReadonlyMap<string, readonly string[]>,
  page = 'docs/errors.md',
): string[] {
  const { rows, problems } = parseTable(markdown);
  const seen = new Set<string>();
  for (const row of rows) {
    if (seen.has(row.code)) problems.push(`${row.code} is listed twice`);
    seen.add(row.code);
    const spec = catalog[row.code];
    if (!spec) {
      problems.push(`${row.code} is in ${page} but not in the catalog`);
      continue;
    }
    if (row.status !== spec.status) {
      problems.push(`${row.code}: ${page} says ${row.status}, the catalog ${spec.status}`);
    }
    if (row.meaning !== spec.meaning) {
      problems.push(`${row.code}: the meaning differs from the catalog's ("${spec.meaning}")`);
    }
    const ops = [...(declared.get(row.code) ?? [])].sort();
    const listed = [...row.cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
    if (ROUTE_CODES.has(row.code)) {
      if (row.cell !== ROUTE_CELL) problems.push(`${row.code}: operations must read "${ROUTE_CELL}"`);
      if (ops.length > 0) problems.push(`${row.code}: declared by operations ${ops.join(', ')}`);
    } else if (ops.length === 0) {
      if (!NONE_DECLARED.test(row.cell) || listed.length > 0) {
        problems.push(`${row.code}: no operation declares it, but ${page} lists "${row.cell}"`);
      }
    } else {
      if (new Set(listed).size !== listed.length) problems.push(`${row.code}: an operation is listed twice`);
      const documented = [...new Set(listed)].sort();
      if (documented.join() !== ops.join()) {
        problems.push(
          `${row.code}: ${page} lists [${documented.join(', ')}], the operations declare [${ops.join(', ')}]`,
        );
      }
    }
  }
  for (const code of Object.keys(catalog)) {
    if (!seen.has(code)) problems.push(`${code} is in the catalog but not in ${page}`);
  }
  for (const [code, ops] of declared) {
    if (!Object.hasOwn(catalog, code))
      problems.push(`${code} is declared by ${ops.join(', ')} but not in the catalog`);
  }
  return problems;
}

/** code → operationIds that can answer with it, from the operations themselves. */
export function declaredCodes<Deps>(operations: readonly AnyOperation<Deps>[]): Map<string, string[]> {
  const byCode = new Map<string, string[]>();
  for (const op of operations) {
    for (const code of errorCodesOf(op)) byCode.set(code, [...(byCode.get(code) ?? []), op.operationId]);
  }
  return byCode;
}
