import { OperationMatchCache } from './operation-match-cache.ts';
import { normalizePathText } from './uri-path.ts';

/**
 * One router for an OpenAPI document's operations: `match(method, path)` answers which operation
 * (method and path template) a request is for, and its path parameters. Built once per deploy;
 * the edge's lifecycle (Deprecation, Sunset, 410), its successor links and traffic attribution
 * all ask it (docs/decisions/edge-proxy.md, "One operation matcher").
 *
 * It never backtracks inside a segment, so its work is linear in the path whatever the document
 * says: templates are split on `/` into a tree of segment patterns, each node of which a match
 * visits at most once (a node is reached only through its one parent), trying at each segment a
 * literal first, then segments mixing literals and parameters (`v{version}`, `{name}.{ext}`, most
 * literal text first), then a whole-segment parameter — concrete paths win over templated ones, as
 * OpenAPI says. A match costs at most (nodes of the tree) × (length of the path).
 *
 * Mixed segments are matched deterministically: a literal after a parameter is taken at its first
 * occurrence, except the segment's last literal, which must end it (`{name}.json` matches
 * `a.b.json` with name `a.b`; `{name}.{ext}` matches `a.b.c` with name `a`, ext `b.c`). Parameters
 * match one segment's non-empty text, never a `/`.
 *
 * Paths are compared in the normal form of ./uri-path.ts: the caller passes a normalised request
 * path, and template literals are normalised the same way (so `/café` matches `/caf%C3%A9`).
 * Parameter values are returned as they appear in that path (still percent-encoded).
 *
 * A template `pathTemplateProblems` refuses (two parameters with no literal between them, a name
 * used twice) is not routed: no router can say where its parameters end. Deploys refuse such
 * documents; one deployed before that check serves those paths as undocumented ones.
 *
 * Its answers to the last requests are kept (./operation-match-cache.ts: at most 2,048, paths up
 * to 128 characters), so a repeated request costs two map lookups; a kept answer is the same
 * frozen object each time.
 */

export const OPERATION_METHODS = [
  'get',
  'put',
  'post',
  'delete',
  'options',
  'head',
  'patch',
  'trace',
] as const;

/** A template's segment: literal text, or parts alternating between literals and parameters. */
type Part = string | { readonly name: string };

interface Template {
  readonly segments: readonly (readonly Part[])[];
  /** Parameter names in order of appearance. */
  readonly names: readonly string[];
  /** Why no router can serve it, or undefined. */
  readonly problem: string | undefined;
}

const PARAMETER = /\{([^{}/]+)\}/g;

/** Splits a path template; literals in the normal form (./uri-path.ts). */
function parseTemplate(template: string): Template {
  const names: string[] = [];
  let problem: string | undefined;
  const segments = template
    .slice(template.startsWith('/') ? 1 : 0)
    .split('/')
    .map((segment) => {
      const parts: Part[] = [];
      let at = 0;
      for (const found of segment.matchAll(PARAMETER)) {
        const name = found[1] as string;
        if (found.index > at) parts.push(normalizePathText(segment.slice(at, found.index), 'utf8'));
        else if (parts.length > 0 && typeof parts[parts.length - 1] !== 'string') {
          const before = (parts[parts.length - 1] as { name: string }).name;
          problem ??= `the parameters {${before}} and {${name}} have no literal text between them, so no router can tell where one ends: put a separator between them (e.g. {${before}}.{${name}}) or make them one parameter`;
        }
        if (names.includes(name))
          problem ??= `the parameter {${name}} appears twice: give each path parameter its own name`;
        names.push(name);
        parts.push({ name });
        at = found.index + found[0].length;
      }
      if (at < segment.length || parts.length === 0) parts.push(normalizePathText(segment.slice(at), 'utf8'));
      return parts;
    });
  return { segments, names, problem };
}

/** A segment pattern's shape, parameter names left out (`v{}`, `{}.{}`). */
const shapeOf = (parts: readonly Part[]) =>
  parts.map((part) => (typeof part === 'string' ? part.replaceAll('{', '%7B') : '{}')).join('');

/** A JSON pointer to a path item (RFC 6901), as the validator's problems name places. */
const pathPointer = (template: string) => `/paths/${template.replaceAll('~', '~0').replaceAll('/', '~1')}`;

/**
 * Why the templates of a document's `paths` cannot be served unambiguously: two parameters with
 * no literal between them (`/{a}{b}`), a parameter name used twice in one template, or one method
 * under two templates that differ only in their parameters' names (a router could not tell which
 * `GET /a/1` is for). Twins with different methods are served (GitHub's description has
 * `GET /orgs/{org}/attestations/{subject_digest}` beside `DELETE …/{attestation_id}`). One
 * sentence per problem, naming the path (a JSON pointer) and what to do; empty when there is none.
 */
export function pathTemplateProblems(paths: unknown): string[] {
  if (paths === null || typeof paths !== 'object') return [];
  const problems: string[] = [];
  /** Template shape → method → the first template that has it. */
  const shapes = new Map<string, Map<string, string>>();
  for (const [template, item] of Object.entries(paths)) {
    const parsed = parseTemplate(template);
    if (parsed.problem !== undefined) problems.push(`${pathPointer(template)}: ${parsed.problem}.`);
    const shape = parsed.segments.map(shapeOf).join('/');
    const methods = shapes.get(shape) ?? new Map<string, string>();
    shapes.set(shape, methods);
    for (const method of OPERATION_METHODS) {
      const operation =
        item !== null && typeof item === 'object' ? (item as Record<string, unknown>)[method] : undefined;
      if (operation === null || typeof operation !== 'object') continue;
      const twin = methods.get(method);
      if (twin === undefined) methods.set(method, template);
      else
        problems.push(
          `${pathPointer(template)}/${method}: ${method.toUpperCase()} ${template} differs from ${method.toUpperCase()} ${twin} only in its parameters' names, so no router can tell which one a request is for: keep one of them.`,
        );
    }
  }
  return problems;
}

export interface OperationMatch<T> {
  /** The operation's method, uppercase (GET for a HEAD request answered by GET). */
  readonly method: string;
  /** The path template as the document writes it. */
  readonly template: string;
  /** Path parameters by name, as they appear in the (normalised) request path. */
  readonly params: Readonly<Record<string, string>>;
  readonly operation: T;
}

interface Leaf<T> {
  readonly template: string;
  readonly names: readonly string[];
  readonly operation: T;
}

class Node<T> {
  readonly literals = new Map<string, Node<T>>();
  /** Mixed segments, most literal text first; each holds its parts (parameter names unused). */
  readonly mixed: { readonly shape: string; readonly parts: readonly Part[]; readonly node: Node<T> }[] = [];
  parameter: Node<T> | undefined;
  /** Operations ending here, by uppercase method. */
  readonly operations = new Map<string, Leaf<T>>();

  child(parts: readonly Part[]): Node<T> {
    if (parts.length === 1 && typeof parts[0] === 'string') {
      const literal = this.literals.get(parts[0]) ?? new Node<T>();
      this.literals.set(parts[0], literal);
      return literal;
    }
    if (parts.length === 1) {
      this.parameter ??= new Node();
      return this.parameter;
    }
    const shape = shapeOf(parts);
    const found = this.mixed.find((entry) => entry.shape === shape);
    if (found) return found.node;
    const node = new Node<T>();
    const literalLength = (p: readonly Part[]) =>
      p.reduce((sum, part) => sum + (typeof part === 'string' ? part.length : 0), 0);
    this.mixed.push({ shape, parts, node });
    // Stable: equally literal patterns keep the document's order.
    this.mixed.sort((a, b) => literalLength(b.parts) - literalLength(a.parts));
    return node;
  }
}

/**
 * Matches one segment against a mixed pattern without backtracking (see the module comment),
 * pushing the parameters' values onto `values`; false when it does not match.
 */
function matchMixed(parts: readonly Part[], segment: string, values: string[]): boolean {
  let at = 0;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as Part;
    if (typeof part === 'string') {
      if (!segment.startsWith(part, at)) return false;
      at += part.length;
      continue;
    }
    const next = parts[i + 1] as string | undefined;
    if (next === undefined) {
      if (at >= segment.length) return false;
      values.push(segment.slice(at));
      return true;
    }
    const end =
      i + 2 === parts.length
        ? segment.endsWith(next)
          ? segment.length - next.length
          : -1
        : segment.indexOf(next, at + 1);
    if (end <= at) return false;
    values.push(segment.slice(at, end));
    at = end;
  }
  return at === segment.length;
}

/** Parameter values gathered along a branch, shared between branches (newest first). */
interface Values {
  readonly value: string;
  readonly before: Values | undefined;
}

export class OperationMatcher<T> {
  readonly #root = new Node<T>();
  #size = 0;
  readonly #cache: OperationMatchCache<OperationMatch<T>>;

  /**
   * A matcher over `operations` (in the document's order: of two with the same method and
   * template shape, the first is kept).
   */
  constructor(
    operations: Iterable<{ method: string; template: string; operation: T }>,
    cache = new OperationMatchCache<OperationMatch<T>>(),
  ) {
    this.#cache = cache;
    for (const { method, template, operation } of operations) {
      const parsed = parseTemplate(template);
      if (parsed.problem !== undefined) continue;
      let node = this.#root;
      for (const parts of parsed.segments) node = node.child(parts);
      const key = method.toUpperCase();
      if (node.operations.has(key)) continue;
      node.operations.set(key, { template, names: parsed.names, operation });
      this.#size++;
    }
  }

  /**
   * The operations of an OpenAPI document's `paths`, each with what `pick` makes of it (skipped
   * when it answers undefined).
   */
  static fromDocument<T>(
    document: Record<string, unknown>,
    pick: (operation: Record<string, unknown>, method: string, template: string) => T | undefined,
  ): OperationMatcher<T> {
    const entries: { method: string; template: string; operation: T }[] = [];
    const paths = document.paths;
    if (paths !== null && typeof paths === 'object') {
      for (const [template, item] of Object.entries(paths as Record<string, unknown>)) {
        if (item === null || typeof item !== 'object') continue;
        for (const method of OPERATION_METHODS) {
          const operation = (item as Record<string, unknown>)[method];
          if (operation === null || typeof operation !== 'object') continue;
          const picked = pick(operation as Record<string, unknown>, method, template);
          if (picked !== undefined) entries.push({ method, template, operation: picked });
        }
      }
    }
    return new OperationMatcher(entries);
  }

  /** How many operations it routes. */
  get size(): number {
    return this.#size;
  }

  /**
   * The operation `method path` is for, or undefined. `path` is normalised (./uri-path.ts),
   * without its query; a HEAD request falls back to the GET operation.
   */
  match(method: string, path: string): OperationMatch<T> | undefined {
    if (this.#size === 0 || !path.startsWith('/')) return undefined;
    if (!this.#cache.holds(path)) return this.#match(method, path);
    const kept = this.#cache.get(method, path);
    if (kept !== undefined) return kept ?? undefined;
    const answer = this.#match(method, path);
    this.#cache.set(method, path, answer ?? null);
    return answer;
  }

  /** `match` without the cache. */
  #match(method: string, path: string): OperationMatch<T> | undefined {
    const segments = path.slice(1).split('/');
    // Depth-first, an explicit stack (no recursion however deep the path): each entry is a node
    // reached at `depth` segments with the values gathered on its way. Pushed in reverse order of
    // preference, so literals are tried first.
    const stack: { node: Node<T>; depth: number; values: Values | undefined }[] = [
      { node: this.#root, depth: 0, values: undefined },
    ];
    const scratch: string[] = [];
    for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
      const { node, depth, values } = entry;
      if (depth === segments.length) {
        const leaf =
          node.operations.get(method) ?? (method === 'HEAD' ? node.operations.get('GET') : undefined);
        if (leaf) return found(leaf, leaf === node.operations.get(method) ? method : 'GET', values);
        continue;
      }
      const segment = segments[depth] as string;
      if (node.parameter && segment !== '')
        stack.push({ node: node.parameter, depth: depth + 1, values: { value: segment, before: values } });
      for (let i = node.mixed.length - 1; i >= 0; i--) {
        const { parts, node: next } = node.mixed[i] as (typeof node.mixed)[number];
        scratch.length = 0;
        if (!matchMixed(parts, segment, scratch)) continue;
        let gathered = values;
        for (const value of scratch) gathered = { value, before: gathered };
        stack.push({ node: next, depth: depth + 1, values: gathered });
      }
      const literal = node.literals.get(segment);
      if (literal) stack.push({ node: literal, depth: depth + 1, values });
    }
    return undefined;
  }
}

function found<T>(leaf: Leaf<T>, method: string, values: Values | undefined): OperationMatch<T> {
  const ordered: string[] = [];
  for (let at = values; at !== undefined; at = at.before) ordered.push(at.value);
  ordered.reverse();
  // fromEntries defines own properties: a parameter named __proto__ is just a name.
  const params: Record<string, string> = Object.fromEntries(
    leaf.names.map((name, i) => [name, ordered[i] as string]),
  );
  // Frozen: the cache gives the same answer to every caller.
  return Object.freeze({
    method,
    template: leaf.template,
    params: Object.freeze(params),
    operation: leaf.operation,
  });
}
