import type { ErrorObject } from 'ajv';
import { type Document, isMap, isScalar, isSeq, type Node, parseDocument } from 'yaml';
import type { PointedProblem } from './check-references.ts';

/** A problem of a deployed document: where (JSON pointer, and line and column in the text) and what. */
export interface ProblemDetail {
  /** JSON pointer (RFC 6901) into the document; '' for the whole document. */
  readonly pointer: string;
  /** 1-based line and column in the uploaded text, or null when the place cannot be found. */
  readonly line: number | null;
  readonly column: number | null;
  readonly message: string;
}

/** The most problems a deploy reports: past that, the first ones say what kind of document it is. */
export const MAX_PROBLEMS = 100;

const COMBINATORS = new Set(['oneOf', 'anyOf', 'if', 'not']);

const isUnder = (path: string, parent: string) => path === parent || path.startsWith(`${parent}/`);

/**
 * The alternative of a `oneOf`/`anyOf` each error belongs to: the combinator's own error (ajv
 * reports it after its alternatives' errors, at the same schema path, at or above their place)
 * and the alternative's index.
 */
function branchesOf(
  errors: readonly ErrorObject[],
): Map<ErrorObject, { group: ErrorObject; branch: number }> {
  const found = new Map<ErrorObject, { group: ErrorObject; branch: number }>();
  errors.forEach((error, index) => {
    const match = /^(.*\/(?:oneOf|anyOf))\/(\d+)\//.exec(error.schemaPath);
    if (!match) return;
    const group = errors
      .slice(index + 1)
      .find((other) => other.schemaPath === match[1] && isUnder(error.instancePath, other.instancePath));
    if (group) found.set(error, { group, branch: Number(match[2]) });
  });
  return found;
}

const describeType = (value: unknown) =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;

function valueAt(document: unknown, pointer: string): unknown {
  let node = document;
  for (const token of pointer.split('/').slice(1)) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[token.replaceAll('~1', '/').replaceAll('~0', '~')];
  }
  return node;
}

const escapePointer = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');

/** One sentence for one error of the OpenAPI schema (ajv's words are for schema authors). */
function sentence(error: ErrorObject, document: unknown): PointedProblem {
  const params = error.params as Record<string, unknown>;
  const at = error.instancePath;
  switch (error.keyword) {
    case 'additionalProperties':
    case 'unevaluatedProperties': {
      const name = String(params.additionalProperty ?? params.unevaluatedProperty);
      return {
        pointer: `${at}/${escapePointer(name)}`,
        message: `"${name}" is not a field OpenAPI defines here: remove it, correct its name, or rename it "x-${name}" to keep it as an extension.`,
      };
    }
    case 'required':
      return {
        pointer: at,
        message: `The field "${String(params.missingProperty)}" is required here: add it.`,
      };
    case 'type': {
      const wanted = String(params.type)
        .split(',')
        .map((type) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`))
        .join(' or ');
      return { pointer: at, message: `Must be ${wanted}, not ${describeType(valueAt(document, at))}.` };
    }
    case 'enum':
      return {
        pointer: at,
        message: `${JSON.stringify(valueAt(document, at))} is not allowed here: use one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}.`,
      };
    case 'const':
      return { pointer: at, message: `Must be ${JSON.stringify(params.allowedValue)}.` };
    case 'minProperties':
      return {
        pointer: at,
        message: `Must have at least ${String(params.limit)} entr${params.limit === 1 ? 'y' : 'ies'}.`,
      };
    case 'pattern':
    case 'format':
      return {
        pointer: at,
        message: `${JSON.stringify(valueAt(document, at))} is not ${error.keyword === 'format' ? `a valid ${String(params.format)}` : `of the form ${String(params.pattern)}`}.`,
      };
    case 'oneOf':
    case 'anyOf':
      return { pointer: at, message: 'Matches none of the forms OpenAPI allows here.' };
    default:
      return {
        pointer: at,
        message: `${error.message ?? 'Is not valid'}.`.replace(/^./, (c) => c.toUpperCase()),
      };
  }
}

/**
 * The OpenAPI schema's errors (ajv, allErrors) as one problem per actual mistake, the most specific
 * one: the notes of combinators ("must match exactly one schema in oneOf", "must match "else"
 * schema") go when a more precise error explains them; of a oneOf's alternatives, only those the
 * document came closest to (the deepest errors, then the fewest) are kept; and alternatives that
 * each want a different value or field at the same place are said once ("use one of …").
 */
export function schemaProblems(errors: readonly ErrorObject[], document: unknown): PointedProblem[] {
  // Which errors are an alternative of which combinator, and which alternatives came closest.
  const groups = new Map<ErrorObject, Map<number, ErrorObject[]>>();
  for (const [error, branch] of branchesOf(errors)) {
    const branches = groups.get(branch.group) ?? new Map<number, ErrorObject[]>();
    groups.set(branch.group, branches);
    branches.set(branch.branch, [...(branches.get(branch.branch) ?? []), error]);
  }
  const dropped = new Set<ErrorObject>();
  const enums = new Map<ErrorObject, unknown[]>();
  const alternatives = new Map<ErrorObject, string[]>();
  for (const branches of groups.values()) {
    const depth = (list: ErrorObject[]) => Math.max(...list.map((e) => e.instancePath.split('/').length));
    const ranked = [...branches.values()].sort((a, b) => depth(b) - depth(a) || a.length - b.length);
    const best = ranked[0] as ErrorObject[];
    const closest = ranked.filter((list) => depth(list) === depth(best) && list.length === best.length);
    for (const list of ranked) if (!closest.includes(list)) for (const e of list) dropped.add(e);
    // Alternatives asking for different values (or fields) at one place: one error listing them.
    const all = [...branches.values()].flat();
    for (const keyword of ['enum', 'required'] as const) {
      const byPlace = new Map<string, ErrorObject[]>();
      for (const e of all.filter((e) => e.keyword === keyword)) {
        byPlace.set(e.instancePath, [...(byPlace.get(e.instancePath) ?? []), e]);
      }
      for (const same of byPlace.values()) {
        if (same.length < 2) continue;
        const [first, ...rest] = same as [ErrorObject, ...ErrorObject[]];
        dropped.delete(first);
        for (const e of rest) dropped.add(e);
        if (keyword === 'enum') {
          enums.set(first, [
            ...new Set(same.flatMap((e) => (e.params as { allowedValues: unknown[] }).allowedValues)),
          ]);
        } else {
          alternatives.set(first, [
            ...new Set(same.map((e) => String((e.params as { missingProperty: string }).missingProperty))),
          ]);
        }
      }
    }
  }
  const kept = errors.filter((e) => !dropped.has(e));
  const explained = (error: ErrorObject) =>
    kept.some(
      (other) =>
        other !== error && !COMBINATORS.has(other.keyword) && isUnder(other.instancePath, error.instancePath),
    );
  const problems: PointedProblem[] = [];
  const seen = new Set<string>();
  for (const error of kept) {
    if (COMBINATORS.has(error.keyword) && (error.keyword === 'if' || explained(error))) continue;
    // The Reference alternative of "a Reference or an X": noise once X's own errors are known.
    const params = error.params as Record<string, unknown>;
    if (error.keyword === 'required' && params.missingProperty === '$ref' && explained(error)) continue;
    // `then`/`else` restating what another error at the same place says.
    if (
      /\/(then|else)\//.test(error.schemaPath) &&
      kept.some(
        (o) =>
          o !== error &&
          o.instancePath === error.instancePath &&
          !COMBINATORS.has(o.keyword) &&
          !/\/(then|else)\//.test(o.schemaPath),
      )
    ) {
      continue;
    }
    let problem: PointedProblem;
    const values = enums.get(error);
    const fields = alternatives.get(error);
    if (values) {
      problem = {
        pointer: error.instancePath,
        message: `${JSON.stringify(valueAt(document, error.instancePath))} is not allowed here: use one of ${values.map((v) => JSON.stringify(v)).join(', ')}.`,
      };
    } else if (fields) {
      problem = {
        pointer: error.instancePath,
        message: `One of the fields ${fields.map((f) => `"${f}"`).join(' or ')} is required here: add one.`,
      };
    } else problem = sentence(error, document);
    const key = `${problem.pointer}\n${problem.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    problems.push(problem);
  }
  return problems;
}

/**
 * Finds each problem's line and column in the uploaded text, read again only now that it has
 * problems (a valid document pays nothing): YAML with yaml's node ranges, JSON by a scan along the
 * problems' pointers (jsonOffsets), which costs a pass over the text and no tree.
 */
export function locateProblems(
  source: string,
  format: 'json' | 'yaml',
  problems: readonly PointedProblem[],
): ProblemDetail[] {
  const wanted = problems.filter((problem) => problem.pointer !== '').map((problem) => problem.pointer);
  const offsets = new Map<string, number | undefined>();
  if (wanted.length === 0) {
    // Nothing to place.
  } else if (format === 'yaml') {
    const document = parseDocument(source);
    for (const pointer of wanted) offsets.set(pointer, offsetOf(document, pointer));
  } else {
    const found = jsonOffsets(source, wanted);
    for (const pointer of wanted) offsets.set(pointer, found(pointer));
  }
  const positions = linePositions(
    source,
    [...offsets.values()].filter((o) => o !== undefined),
  );
  return problems.map((problem) => {
    // The whole document has no one place to point at.
    const offset = problem.pointer === '' ? undefined : offsets.get(problem.pointer);
    const position = offset === undefined ? undefined : positions.get(offset);
    return {
      pointer: problem.pointer,
      line: position?.line ?? null,
      column: position?.column ?? null,
      message: problem.message,
    };
  });
}

/** 1-based line and column (in UTF-16 units, as editors count) of each offset, in one pass. */
function linePositions(
  source: string,
  offsets: readonly number[],
): Map<number, { line: number; column: number }> {
  const sorted = [...new Set(offsets)].sort((a, b) => a - b);
  const positions = new Map<number, { line: number; column: number }>();
  let line = 1;
  let lineStart = 0;
  let at = 0;
  for (const offset of sorted) {
    for (; at < offset; at++) {
      if (source.charCodeAt(at) === 10) {
        line += 1;
        lineStart = at + 1;
      }
    }
    positions.set(offset, { line, column: offset - lineStart + 1 });
  }
  return positions;
}

/**
 * Where the JSON text puts each pointer's node (a member's key, an item's value), or for a pointer
 * that names nothing, its nearest enclosing node. Only the subtrees on the way to a wanted pointer
 * are read member by member; the rest is skipped by brackets, so GitHub's 13 MB takes one pass.
 */
function jsonOffsets(source: string, pointers: readonly string[]): (pointer: string) => number | undefined {
  const prefixes = new Set<string>(['']);
  for (const pointer of pointers) {
    let at = pointer.indexOf('/', 1);
    while (at > 0) {
      prefixes.add(pointer.slice(0, at));
      at = pointer.indexOf('/', at + 1);
    }
    prefixes.add(pointer);
  }
  const found = new Map<string, number>();
  let i = 0;
  const space = () => {
    while (i < source.length && ' \t\r\n'.includes(source[i] as string)) i++;
  };
  const skipString = () => {
    i++;
    while (i < source.length && source[i] !== '"') i += source[i] === '\\' ? 2 : 1;
    i++;
  };
  const skipValue = () => {
    space();
    const first = source[i];
    if (first === '"') return skipString();
    if (first !== '{' && first !== '[') {
      while (i < source.length && !',}] \t\r\n'.includes(source[i] as string)) i++;
      return;
    }
    let depth = 0;
    do {
      const c = source[i];
      if (c === '"') {
        skipString();
        continue;
      }
      if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') depth--;
      i++;
    } while (depth > 0 && i < source.length);
  };
  const readValue = (pointer: string) => {
    space();
    if (!found.has(pointer)) found.set(pointer, i);
    const open = source[i];
    if (open !== '{' && open !== '[') return skipValue();
    i++;
    let index = 0;
    for (;;) {
      space();
      if (source[i] === '}' || source[i] === ']' || i >= source.length) {
        i++;
        return;
      }
      let child: string;
      if (open === '{') {
        const keyAt = i;
        skipString();
        const key = JSON.parse(source.slice(keyAt, i)) as string;
        child = `${pointer}/${escapePointer(key)}`;
        if (prefixes.has(child)) found.set(child, keyAt);
        space();
        i++; // the colon
      } else child = `${pointer}/${index++}`;
      if (prefixes.has(child)) readValue(child);
      else skipValue();
      space();
      if (source[i] === ',') i++;
    }
  };
  try {
    readValue('');
  } catch {
    // Valid JSON by now; a surprise only costs the positions.
  }
  return (pointer) => {
    for (let at = pointer; ; at = at.slice(0, at.lastIndexOf('/'))) {
      const offset = found.get(at);
      if (offset !== undefined || at === '') return offset;
    }
  };
}

/**
 * The offset in the text of the node a pointer names: the key of a member (where a person looks
 * for it), or the nearest enclosing node that exists (a missing field is reported at its object).
 */
function offsetOf(document: Document, pointer: string): number | undefined {
  let node: Node | null | undefined = document.contents as Node | null;
  let offset = node?.range?.[0];
  for (const token of pointer.split('/').slice(1)) {
    const key = token.replaceAll('~1', '/').replaceAll('~0', '~');
    if (isMap(node)) {
      const pair = node.items.find(
        (item) => (isScalar(item.key) ? String(item.key.value) : String(item.key)) === key,
      );
      if (!pair) return offset;
      offset = (pair.key as Node | null)?.range?.[0] ?? offset;
      node = pair.value as Node | null;
    } else if (isSeq(node)) {
      const item = node.items[Number(key)] as Node | undefined;
      if (!item) return offset;
      offset = item.range?.[0] ?? offset;
      node = item;
    } else return offset;
  }
  return offset;
}

/** A problem as one line of text: the `problems` strings of a deploy. */
export function problemText(problem: ProblemDetail): string {
  const position = problem.line === null ? undefined : `line ${problem.line}, column ${problem.column}`;
  if (problem.pointer === '') return position ? `${problem.message} (${position})` : problem.message;
  return `${problem.pointer}${position ? ` (${position})` : ''}: ${problem.message}`;
}
