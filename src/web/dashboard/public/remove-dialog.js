// @ts-check
import { announce, errorBanner, h, replaceChildren } from './dom.js';

/** @typedef {import('./domains-api.js').Domain} Domain */

/**
 * The "Remove domain?" confirmation: a modal <dialog> that opens on Cancel. Focus goes back to
 * the domain's menu button on cancel (found again: the card may have been redrawn meanwhile), or
 * to `afterRemove`'s element once removed.
 * @param {object} options
 * @param {(domain: Domain) => Promise<void>} options.remove asks the API
 * @param {() => void} options.removed once removed and closed (the page refreshes its list)
 * @param {(hostname: string) => HTMLElement | null | undefined} options.menuButtonOf
 * @param {() => HTMLElement | null | undefined} options.afterRemove where focus goes once removed
 */
export function removeDialog({ remove, removed, menuButtonOf, afterRemove }) {
  const title = h('h2', { id: 'remove-title' }, 'Remove domain?');
  const body = h('p', { id: 'remove-body' });
  const errorSlot = h('div', {});
  const cancel = h('button', { type: 'button', class: 'button', autofocus: true }, 'Cancel');
  const confirm = h('button', { type: 'button', class: 'button button-danger' }, 'Remove domain');
  const element = h(
    'dialog',
    { class: 'dialog', 'aria-labelledby': 'remove-title', 'aria-describedby': 'remove-body' },
    title,
    body,
    errorSlot,
    h('div', { class: 'dialog-actions' }, cancel, confirm),
  );
  /** @type {Domain | null} */
  let current = null;
  /** @type {HTMLElement | null} */
  let returnFocus = null;
  cancel.addEventListener('click', () => element.close());
  element.addEventListener('close', () => {
    const gone = element.returnValue === 'removed';
    element.returnValue = '';
    if (gone) afterRemove()?.focus();
    else ((current && menuButtonOf(current.hostname)) ?? returnFocus)?.focus();
    current = null;
  });
  confirm.addEventListener('click', async () => {
    if (!current) return;
    const domain = current;
    confirm.disabled = true;
    confirm.textContent = 'Removing…';
    try {
      await remove(domain);
      announce(`${domain.unicode} removed. Serving traffic stopped.`);
      element.close('removed');
      removed();
    } catch (error) {
      replaceChildren(errorSlot, errorBanner(error, 'The domain was not removed'));
    } finally {
      confirm.disabled = false;
      confirm.textContent = 'Remove domain';
    }
  });
  return {
    element,
    /**
     * @param {Domain} domain
     * @param {HTMLElement} trigger
     */
    open(domain, trigger) {
      current = domain;
      returnFocus = trigger;
      replaceChildren(title, 'Remove ', domain.unicode, '?');
      replaceChildren(
        body,
        'Serving traffic for ',
        h('strong', {}, domain.unicode),
        ' stops immediately, and redirects from or to it are removed too. You can add it again later.',
      );
      replaceChildren(errorSlot);
      element.showModal();
      cancel.focus();
    },
    close() {
      if (element.open) element.close();
    },
  };
}
