import type { CliIo, TextStream } from './io.ts';

/** A change as every printer needs it: the API's (with traffic) and the offline engine's alike. */
export interface PrintableChange {
  id: string;
  level: 'breaking' | 'warning' | 'info';
  operation?: string | null;
  location: string;
  message: string;
  traffic?: { requests: number; callers: number };
}

/** Paints a text in an ANSI colour, or returns it as it is. */
export type Paint = (colour: string, text: string) => string;

const LEVELS: readonly { level: PrintableChange['level']; title: string; colour: string }[] = [
  { level: 'breaking', title: 'Breaking', colour: '\x1b[1;31m' },
  { level: 'warning', title: 'Warnings', colour: '\x1b[1;33m' },
  { level: 'info', title: 'Info', colour: '\x1b[1m' },
];
const DIM = '\x1b[2m';
const RESET = '\x1b[0m';

const plain: Paint = (_colour, text) => text;

/** Colour only on a terminal, and never with NO_COLOR (no-color.org) or TERM=dumb. */
export function painter(stream: TextStream, env: CliIo['env']): Paint {
  const on = stream.isTTY === true && (env.NO_COLOR ?? '') === '' && env.TERM !== 'dumb';
  return on ? (colour, text) => `${colour}${text}${RESET}` : plain;
}

/** ` (12 calls from 3 callers in the last 7 days)` on a breaking change the gate joined with traffic. */
function reach(change: PrintableChange): string {
  if (!change.traffic) return '';
  const { requests, callers } = change.traffic;
  return requests === 0
    ? ' (not called in the last 7 days)'
    : ` (${requests} call${requests === 1 ? '' : 's'} from ${callers} caller${callers === 1 ? '' : 's'} in the last 7 days)`;
}

/**
 * A change list as lines for people, the one layout every command prints (`kennel diff`,
 * `deploy`, `deploy --dry-run`, `deploys promote|compare`): grouped by level, breaking first, then
 * by operation, each change with its rule id and place in the document.
 */
export function changeLines(changes: readonly PrintableChange[], paint: Paint = plain): string[] {
  if (changes.length === 0) return ['No changes to the API.'];
  const lines: string[] = [];
  for (const { level, title, colour } of LEVELS) {
    const group = changes.filter((change) => change.level === level);
    if (group.length === 0) continue;
    if (lines.length > 0) lines.push('');
    lines.push(paint(colour, `${title} (${group.length})`));
    let heading: string | undefined;
    for (const change of group) {
      const operation = change.operation ?? '(the whole document)';
      if (operation !== heading) {
        heading = operation;
        lines.push(`  ${operation}`);
      }
      lines.push(`    - ${change.message}${reach(change)}`);
      lines.push(paint(DIM, `      ${change.id} at ${change.location}`));
    }
  }
  return lines;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** `3 changes from A to B: 1 breaking, 2 warnings, 0 info.` (the lead line of `kennel diff`). */
export function changeSummary(changes: readonly PrintableChange[], base: string, revision: string): string {
  const count = (level: PrintableChange['level']) =>
    changes.filter((change) => change.level === level).length;
  return `${plural(changes.length, 'change')} from ${base} to ${revision}: ${count('breaking')} breaking, ${plural(count('warning'), 'warning')}, ${count('info')} info.`;
}
