/**
 * The change engine: compares two OpenAPI documents (3.0 or 3.1, parsed JSON or YAML, local
 * `$ref`s resolved here) and lists what changed, each change with a rule id, a level and a
 * sentence a person understands. One engine for the CLI (`kennel diff`), the deploy gate, the
 * changelog and the dashboard. The rules are ./rules.ts, documented in docs/changes.md; why it is
 * ours and not a library is in docs/decisions/deploy-changes.md.
 */

import type { Change } from './change.ts';
import { compareOperation, operationsOf, reportRemoved } from './diff-operations.ts';
import { DocumentSide, matchUp, stableRefs } from './document.ts';
import { RULES } from './rules.ts';

export type { Change, ChangeLevel } from './change.ts';
export { RULES } from './rules.ts';

export interface DiffOptions {
  /** The moment the sunset rule compares `x-sunset` dates with (default: now). */
  now?: Date;
}

/**
 * Every change from `base` to `revision`, in the revision's order of operations (removed
 * operations where they were). Pure and synchronous: a 10 MB document takes about a second, so
 * platform code calls it off the event loop.
 */
export function diffDocuments(
  base: Record<string, unknown>,
  revision: Record<string, unknown>,
  options: DiffOptions = {},
): Change[] {
  const now = options.now ?? new Date();
  const baseSide = new DocumentSide(base);
  const revisionSide = new DocumentSide(revision);
  const comparison = {
    base: baseSide,
    revision: revisionSide,
    stable: stableRefs(baseSide, revisionSide),
    memo: new Map(),
  };
  const changes: Change[] = [];
  const seen = new Set<string>();
  const report = (id: string, operation: string | undefined, location: string, message: string) => {
    const rule = RULES[id];
    if (rule === undefined) throw new Error(`the change engine has no rule ${id}`);
    // One component changed at several places of one operation says the same thing once.
    const key = `${id}\0${operation}\0${location}\0${message}`;
    if (seen.has(key)) return;
    seen.add(key);
    changes.push({
      id,
      level: rule.level,
      ...(operation === undefined ? {} : { operation }),
      location,
      message,
    });
  };
  const before = operationsOf(baseSide);
  const after = operationsOf(revisionSide);
  matchUp(before, after, {
    added(op) {
      const name = `${op.method.toUpperCase()} ${op.template}`;
      report('endpoint-added', name, op.pointer, `${name} was added.`);
    },
    both: (was, op) => compareOperation(comparison, was, op, report),
    removed: (op) => reportRemoved(op, now, report),
  });
  return changes;
}

export function hasBreaking(changes: readonly Change[]): boolean {
  return changes.some((change) => change.level === 'breaking');
}
