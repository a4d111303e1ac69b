// @ts-check
import { h } from './dom.js';
import { confirmAction, muted } from './widgets.js';

/**
 * A deploy's changes as the change engine lists them (src/lib/openapi-diff): each with its level,
 * the operation it belongs to and a sentence; and the confirmation a breaking deploy or promotion
 * asks for, listing what would break.
 */

/** @typedef {import('./types.js').Change} Change */

/** @type {Record<Change['level'], string>} */
const LEVEL_NAMES = { breaking: 'Breaking', warning: 'Warning', info: 'Change' };
/** @type {Record<Change['level'], number>} */
const LEVEL_ORDER = { breaking: 0, warning: 1, info: 2 };

/** @param {readonly Change[]} changes */
export const breakingOf = (changes) => changes.filter((change) => change.level === 'breaking');

/**
 * `3 changes, 1 breaking`, or `No changes`.
 * @param {readonly Change[]} changes
 */
export function changeSummary(changes) {
  if (changes.length === 0) return 'No changes';
  const breaking = breakingOf(changes).length;
  const total = changes.length === 1 ? '1 change' : `${changes.length} changes`;
  return breaking > 0 ? `${total}, ${breaking} breaking` : total;
}

/**
 * A change's sentence with its operation set in code. The engine's sentences usually start with
 * the operation (`DELETE /pets/{petId} was removed…`): it is not written twice.
 * @param {Change} change
 * @returns {import('./dom.js').Child[]}
 */
function changeText(change) {
  const { operation, message } = change;
  if (!operation) return [message];
  const code = h('code', { class: 'change-operation' }, operation);
  return message.startsWith(operation) ? [code, message.slice(operation.length)] : [code, ' ', message];
}

/**
 * The changes as a list, what breaks first.
 * @param {readonly Change[]} changes
 * @param {string} [empty] what an empty list says
 */
export function changeList(changes, empty = 'Nothing changed for callers.') {
  if (changes.length === 0) return h('p', { class: 'muted change-none' }, empty);
  const sorted = [...changes].sort((a, b) => LEVEL_ORDER[a.level] - LEVEL_ORDER[b.level]);
  return h(
    'ul',
    { class: 'change-list' },
    sorted.map((change) =>
      h(
        'li',
        { class: `change change-${change.level}`, 'data-change': change.id },
        h('span', { class: `change-level change-level-${change.level}` }, LEVEL_NAMES[change.level]),
        h('span', { class: 'change-text' }, changeText(change)),
      ),
    ),
  );
}

/**
 * Changes folded under a summary (the history's rows): open by default when something breaks.
 * @param {readonly Change[]} changes
 */
export function changeDetails(changes) {
  if (changes.length === 0) return h('span', { class: 'muted' }, 'No changes');
  const breaking = breakingOf(changes).length > 0;
  return h(
    'details',
    { class: 'change-details' },
    h(
      'summary',
      {},
      breaking ? h('span', { class: 'badge badge-breaking' }, 'Breaking') : null,
      ' ',
      changeSummary(changes),
    ),
    changeList(changes),
  );
}

/**
 * Asks before publishing breaking changes: the dialog lists them (and says how many other
 * changes come with them), and runs `action` on confirmation. Its error stays in the dialog.
 * Answers whether it ran. Focus returns to `trigger` when it is still on the page.
 * @param {{ title: string, intro: string, changes: readonly Change[], confirm: string,
 *   busy: string, action: () => Promise<void>, trigger?: HTMLElement | null }} options
 * @returns {Promise<boolean>}
 */
export function confirmBreaking({ title, intro, changes, confirm, busy, action, trigger }) {
  const breaking = breakingOf(changes);
  const others = changes.length - breaking.length;
  return confirmAction({
    title,
    body: intro,
    confirm,
    busy,
    action,
    trigger,
    wide: true,
    testid: 'breaking-dialog',
    details: [
      h(
        'div',
        { class: 'dialog-scroll', tabindex: '0', role: 'region', 'aria-label': 'What breaks' },
        changeList(breaking),
      ),
      others > 0
        ? muted(others === 1 ? '1 other change comes with it.' : `${others} other changes come with it.`)
        : null,
    ],
  });
}
