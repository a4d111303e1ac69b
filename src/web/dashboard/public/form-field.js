// @ts-check
import { h, replaceChildren } from './dom.js';

/**
 * A labelled form field with its hint and an error slot tied to the control
 * (aria-describedby, aria-invalid), so an API error can be shown next to the field it is about.
 * @param {{ id: string, label: string, control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement,
 *   hint?: import('./dom.js').Child, extra?: import('./dom.js').Child }} options
 */
export function formField({ id, label, control, hint, extra }) {
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  control.id = id;
  control.setAttribute('aria-describedby', hint ? `${hintId} ${errorId}` : errorId);
  const errorSlot = h('div', { id: errorId, class: 'field-error' });
  const element = h(
    'div',
    { class: 'field' },
    h('label', { for: id }, label),
    extra ? h('div', { class: 'input-row' }, control, extra) : control,
    hint ? h('p', { id: hintId, class: 'hint' }, hint) : null,
    errorSlot,
  );
  return {
    element,
    control,
    /** @param {{ message?: string, code?: string }} error */
    showError(error) {
      control.setAttribute('aria-invalid', 'true');
      replaceChildren(
        errorSlot,
        h(
          'p',
          { role: 'alert' },
          error.message ?? String(error),
          error.code ? [' ', h('span', { class: 'code-tag' }, error.code)] : null,
        ),
      );
    },
    clear() {
      control.removeAttribute('aria-invalid');
      replaceChildren(errorSlot);
    },
  };
}
