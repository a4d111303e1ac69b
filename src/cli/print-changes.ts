import type { Change } from './api-types.ts';

/** The levels in the order people read them, with their headings. */
const LEVELS: readonly (readonly [Change['level'], string])[] = [
  ['breaking', 'Breaking'],
  ['warning', 'Warnings'],
  ['info', 'Other changes'],
];

/** ` (12 calls from 3 callers in the last 7 days)` on a breaking change the gate joined with traffic. */
function reach(change: Change): string {
  if (!change.traffic) return '';
  const { requests, callers } = change.traffic;
  return requests === 0
    ? ' (not called in the last 7 days)'
    : ` (${requests} call${requests === 1 ? '' : 's'} from ${callers} caller${callers === 1 ? '' : 's'} in the last 7 days)`;
}

/**
 * A change list as lines for people, grouped by level (breaking first), each change with its
 * rule id: what `kennel deploy`, `kennel deploys promote` and `kennel deploys compare` print.
 */
export function changeLines(changes: readonly Change[]): string[] {
  if (changes.length === 0) return ['No changes to the API.'];
  const lines: string[] = [];
  for (const [level, heading] of LEVELS) {
    const group = changes.filter((c) => c.level === level);
    if (group.length === 0) continue;
    lines.push(`${heading} (${group.length}):`);
    for (const change of group) lines.push(`  - ${change.message}${reach(change)} [${change.id}]`);
  }
  return lines;
}
