// @ts-check
import { h } from './dom.js';

/**
 * A domain's "More actions" menu button (WAI-ARIA menu button: arrow keys, Home/End, Escape
 * returns focus to the button, Tab or a click outside closes it).
 * @param {object} options
 * @param {string} options.label the domain as people read it
 * @param {number} options.id the card's id, for element ids
 * @param {(trigger: HTMLElement) => void} options.onRemove
 */
export function actionsMenu({ label, id, onRemove }) {
  const menuId = `domain-${id}-menu`;
  const trigger = h(
    'button',
    {
      type: 'button',
      class: 'button button-icon',
      'aria-haspopup': 'menu',
      'aria-expanded': 'false',
      'aria-controls': menuId,
      'aria-label': `More actions for ${label}`,
      dataset: { focus: 'menu' },
    },
    h('span', { 'aria-hidden': 'true' }, '⋯'),
  );
  const remove = h(
    'button',
    { type: 'button', role: 'menuitem', class: 'menu-item danger', tabindex: '-1' },
    'Remove domain…',
  );
  const list = h(
    'ul',
    { id: menuId, role: 'menu', class: 'menu', hidden: true, 'aria-label': `Actions for ${label}` },
    h('li', { role: 'none' }, remove),
  );
  const wrapper = h('div', { class: 'menu-wrap' }, trigger, list);
  /** @returns {HTMLElement[]} */
  const items = () =>
    [...list.querySelectorAll('[role="menuitem"]')].map((el) => /** @type {HTMLElement} */ (el));
  /** @param {boolean} focusTrigger */
  const close = (focusTrigger) => {
    list.hidden = true;
    trigger.setAttribute('aria-expanded', 'false');
    document.removeEventListener('pointerdown', outside, true);
    if (focusTrigger) trigger.focus();
  };
  /** @param {boolean} focusLast */
  const open = (focusLast) => {
    list.hidden = false;
    trigger.setAttribute('aria-expanded', 'true');
    const all = items();
    (focusLast ? all[all.length - 1] : all[0])?.focus();
    document.addEventListener('pointerdown', outside, true);
  };
  /** @param {Event} event */
  function outside(event) {
    if (!wrapper.contains(/** @type {Node | null} */ (event.target))) close(false);
  }
  trigger.addEventListener('click', () => (list.hidden ? open(false) : close(true)));
  trigger.addEventListener('keydown', (event) => {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      open(event.key === 'ArrowUp');
    }
  });
  list.addEventListener('keydown', (event) => {
    const all = items();
    const at = all.indexOf(/** @type {HTMLElement} */ (document.activeElement));
    if (event.key === 'Escape') {
      event.preventDefault();
      close(true);
    } else if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      all[(at + (event.key === 'ArrowDown' ? 1 : all.length - 1)) % all.length]?.focus();
    } else if (event.key === 'Home' || event.key === 'End') {
      event.preventDefault();
      (event.key === 'Home' ? all[0] : all[all.length - 1])?.focus();
    } else if (event.key === 'Tab') {
      close(false);
    }
  });
  remove.addEventListener('click', () => {
    close(false);
    onRemove(trigger);
  });
  return wrapper;
}
