/**
 * One side of a comparison: the parsed document, local `$ref`s followed on demand (never inlined:
 * recursive schemas exist in real documents, and GitHub's description is seven times larger
 * inlined), and JSON pointers to say where things are.
 */

export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** A JSON pointer token (RFC 6901). */
export const escapeToken = (token: string | number) =>
  String(token).replaceAll('~', '~0').replaceAll('/', '~1');

export const pointer = (base: string, ...tokens: (string | number)[]) =>
  base + tokens.map((token) => `/${escapeToken(token)}`).join('');

/**
 * Walks what two sides hold by key, in the revision's order: each entry only the revision has
 * (`added`), each both have (`both`), then each only the base has (`removed`).
 */
export function matchUp<B, R = B>(
  before: ReadonlyMap<string, B>,
  after: ReadonlyMap<string, R>,
  on: {
    added(now: R, key: string): void;
    both(was: B, now: R, key: string): void;
    removed(was: B, key: string): void;
  },
): void {
  for (const [key, now] of after) {
    const was = before.get(key);
    if (was === undefined) on.added(now, key);
    else on.both(was, now, key);
  }
  for (const [key, was] of before) if (!after.has(key)) on.removed(was, key);
}

/** A node of a document and where it is. */
export interface Located {
  readonly node: unknown;
  readonly pointer: string;
}

const MAX_REF_CHAIN = 32;

export class DocumentSide {
  readonly root: Json;
  readonly #cache = new Map<string, unknown>();

  constructor(root: Json) {
    this.root = root;
  }

  /** The node at a local pointer (`#/components/schemas/Pet`), or undefined. */
  at(ref: string): unknown {
    if (this.#cache.has(ref)) return this.#cache.get(ref);
    let node: unknown = this.root;
    const path = ref.slice(1);
    if (path !== '') {
      for (const raw of path.slice(1).split('/')) {
        const token = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
        if (Array.isArray(node)) node = node[Number(token)];
        else if (isObject(node)) node = Object.hasOwn(node, token) ? node[token] : undefined;
        else node = undefined;
        if (node === undefined) break;
      }
    }
    this.#cache.set(ref, node);
    return node;
  }

  /**
   * Follows local `$ref`s from `located`; the result's pointer is the target's. A ref that leads
   * nowhere, outside the document, or round in a circle is answered as the last node reached.
   */
  resolve(located: Located): Located & { ref: string | undefined } {
    let current = located;
    let ref: string | undefined;
    for (let hops = 0; hops < MAX_REF_CHAIN; hops++) {
      const next = isObject(current.node) ? current.node.$ref : undefined;
      if (typeof next !== 'string' || !next.startsWith('#')) break;
      const target = this.at(next);
      if (target === undefined) break;
      ref = next;
      current = { node: target, pointer: next.slice(1) };
    }
    return { ...current, ref };
  }
}

/**
 * Keys no rule reads: prose and examples. Skipped when comparing and when collecting refs (except
 * as property names under `properties`), so a component whose description or examples changed is
 * no reason to walk every operation that uses it; examples are much of a large document.
 */
const PROSE = new Set(['description', 'summary', 'example', 'examples', 'externalDocs']);

/** Every local `$ref` string in a tree, prose and examples left out (for-in: whole documents). */
export function collectRefs(node: unknown, into: Set<string>): void {
  const stack: unknown[] = [node];
  const names: boolean[] = [false];
  while (stack.length > 0) {
    const current = stack.pop();
    const isProperties = names.pop() === true;
    if (Array.isArray(current)) {
      for (const item of current)
        if (item !== null && typeof item === 'object') {
          stack.push(item);
          names.push(false);
        }
    } else if (current !== null && typeof current === 'object') {
      for (const key in current) {
        if (!isProperties && PROSE.has(key)) continue;
        const value = (current as Json)[key];
        if (key === '$ref' && !isProperties) {
          if (typeof value === 'string' && value.startsWith('#')) into.add(value);
        } else if (value !== null && typeof value === 'object') {
          stack.push(value);
          names.push(key === 'properties' && !isProperties);
        }
      }
    }
  }
}

/**
 * Deep equality of two JSON trees as far as the rules are concerned (prose and examples left out),
 * refs compared as text; the local refs met go into `refs`.
 */
export function sameJson(a: unknown, b: unknown, refs?: Set<string>, isProperties = false): boolean {
  if (a === b) {
    if (refs !== undefined && a !== null && typeof a === 'object') collectRefs(a, refs);
    return true;
  }
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i], refs)) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  let count = 0;
  for (const key in a) {
    if (!isProperties && PROSE.has(key)) continue;
    count++;
    const value = (a as Json)[key];
    if (!Object.hasOwn(b, key)) return false;
    if (!sameJson(value, (b as Json)[key], refs, key === 'properties' && !isProperties)) return false;
    if (key === '$ref' && refs !== undefined && typeof value === 'string' && value.startsWith('#'))
      refs.add(value);
  }
  for (const key in b) if (isProperties || !PROSE.has(key)) count--;
  return count === 0;
}

/**
 * The local refs whose targets are the same in both documents, and so are all the targets they
 * lead to: a comparison that meets the same stable ref on both sides has nothing to report there
 * and skips it. This is what makes a 10 MB document with a few changes quick to compare.
 */
export function stableRefs(base: DocumentSide, revision: DocumentSide): Set<string> {
  const all = new Set<string>();
  collectRefs(base.root, all);
  collectRefs(revision.root, all);
  const dependents = new Map<string, string[]>();
  const changed: string[] = [];
  for (const ref of all) {
    const inner = new Set<string>();
    if (!sameJson(base.at(ref), revision.at(ref), inner) || base.at(ref) === undefined) {
      changed.push(ref);
      continue;
    }
    for (const target of inner) {
      const list = dependents.get(target);
      if (list === undefined) dependents.set(target, [ref]);
      else list.push(ref);
    }
  }
  // Everything that leads to a changed target is unstable too.
  const unstable = new Set(changed);
  const queue = [...changed];
  for (let ref = queue.pop(); ref !== undefined; ref = queue.pop()) {
    for (const dependent of dependents.get(ref) ?? []) {
      if (unstable.has(dependent)) continue;
      unstable.add(dependent);
      queue.push(dependent);
    }
  }
  const stable = new Set<string>();
  for (const ref of all) if (!unstable.has(ref)) stable.add(ref);
  return stable;
}
