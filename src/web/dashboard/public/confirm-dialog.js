// @ts-check
import { h } from './dom.js';

/**
 * A modal confirmation: a native <dialog> (focus stays inside, Escape cancels) that opens on
 * Cancel, so Enter never confirms by accident, and gives focus back to what had it.
 * Resolves true when confirmed.
 * @param {{ title: string, body: string, confirmLabel: string, danger?: boolean }} options
 * @returns {Promise<boolean>}
 */
export function confirmDialog({ title, body, confirmLabel, danger = false }) {
  const returnFocus = /** @type {HTMLElement | null} */ (document.activeElement);
  const cancel = h('button', { type: 'button', class: 'button' }, 'Cancel');
  const confirm = h(
    'button',
    { type: 'button', class: `button ${danger ? 'button-danger' : 'button-primary'}` },
    confirmLabel,
  );
  const dialog = h(
    'dialog',
    { class: 'dialog', 'aria-labelledby': 'confirm-title', 'aria-describedby': 'confirm-body' },
    h('h2', { id: 'confirm-title' }, title),
    h('p', { id: 'confirm-body' }, body),
    h('div', { class: 'dialog-actions' }, cancel, confirm),
  );
  document.body.append(dialog);
  return new Promise((resolve) => {
    cancel.addEventListener('click', () => dialog.close('cancel'));
    confirm.addEventListener('click', () => dialog.close('confirm'));
    dialog.addEventListener('close', () => {
      const confirmed = dialog.returnValue === 'confirm';
      dialog.remove();
      if (returnFocus?.isConnected) returnFocus.focus();
      resolve(confirmed);
    });
    dialog.showModal();
    cancel.focus();
  });
}
