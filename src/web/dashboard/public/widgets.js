// @ts-check
import { api } from './api.js';
import { announce, copyText, errorBanner, h, replaceChildren, time } from './dom.js';

/**
 * Form fields, tables, empty states, the one-time secret box and the confirmation dialog the
 * dashboard's pages share.
 */

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

/**
 * A form of one field, its submit button beside it and a status line under it (what was done).
 * `work` runs with the button busy and the field's error cleared; an error it throws shows under
 * the field, which gets focus back.
 * @param {{ id: string, label: string, control: HTMLInputElement | HTMLSelectElement, hint: string,
 *   submitLabel: string, busy: string, work: (done: HTMLElement) => Promise<void> }} options
 */
export function fieldForm({ id, label, control, hint, submitLabel, busy, work }) {
  const submit = h('button', { type: 'submit', class: 'button button-primary' }, submitLabel);
  const field = formField({ id, label, control, extra: submit, hint });
  const done = h('p', { class: 'hint', role: 'status' });
  const form = h(
    'form',
    {
      class: 'stack-form',
      novalidate: true,
      onsubmit: onSubmit(
        submit,
        done,
        busy,
        () => {
          field.clear();
          return work(done);
        },
        (error) => {
          field.showError(error);
          control.focus();
          return null;
        },
      ),
    },
    field.element,
    done,
  );
  return { form, field };
}

/**
 * A labelled input with an optional hint: formField around a new <input>.
 * @param {string} id
 * @param {string} label
 * @param {Record<string, unknown>} attributes
 * @param {string} [hint]
 */
export function field(id, label, attributes, hint) {
  const input = h('input', { name: id, ...attributes });
  const built = formField({ id, label, control: input, hint });
  return { ...built, input };
}

/**
 * A new password: the API's limits (12 to 1024 characters) and the browser's password manager hint.
 * @param {string} id
 * @param {string} label
 * @param {string} hint
 */
export function newPasswordField(id, label, hint) {
  return field(
    id,
    label,
    { type: 'password', autocomplete: 'new-password', required: true, minlength: 12, maxlength: 1024 },
    hint,
  );
}

/** An account's email, as the API takes it (up to 254 characters); password managers fill it in. */
export function emailField() {
  return field('email', 'Email', { type: 'email', autocomplete: 'username', required: true, maxlength: 254 });
}

/** A person's name for a new account, as the API takes it (up to 100 characters). */
export function nameField() {
  return field('name', 'Your name', { type: 'text', autocomplete: 'name', required: true, maxlength: 100 });
}

/**
 * A project's origin URL, as the API takes it (up to 2048 characters).
 * @param {string} placeholder
 */
export function originUrlInput(placeholder) {
  return h('input', {
    name: 'originUrl',
    type: 'url',
    inputmode: 'url',
    maxlength: 2048,
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder,
  });
}

/**
 * A one-line form (a token's name, an invitation's email): one required field with its submit
 * button beside it. `work` gets the input; its errors show in `errorSlot` (the field has no error
 * slot of its own) under the title `failure`.
 * @param {{ id: string, label: string, attributes: Record<string, unknown>, hint: string,
 *   submitLabel: string, busy: string, errorSlot: HTMLElement,
 *   work: (input: HTMLInputElement) => Promise<void>, failure: string }} options
 */
export function inlineForm({ id, label, attributes, hint, submitLabel, busy, errorSlot, work, failure }) {
  const hintId = `${id}-hint`;
  const input = h('input', {
    id,
    required: true,
    autocomplete: 'off',
    ...attributes,
    'aria-describedby': hintId,
  });
  const submit = h('button', { type: 'submit', class: 'button button-primary' }, submitLabel);
  const form = h(
    'form',
    {
      class: 'inline-form',
      onsubmit: onSubmit(
        submit,
        errorSlot,
        busy,
        () => work(input),
        () => failure,
      ),
    },
    h(
      'div',
      { class: 'field' },
      h('label', { for: id }, label),
      h('div', { class: 'input-row' }, input, submit),
      h('p', { class: 'hint', id: hintId }, hint),
    ),
  );
  return { form, input };
}

/**
 * A list's table, wrapped so it can scroll sideways on a narrow screen, with a caption for screen
 * readers. An empty column name is the actions column: its header is for screen readers only.
 * @param {{ caption: string, columns: string[], rows: import('./dom.js').Child, className?: string }} options
 */
export function dataTable({ caption, columns, rows, className }) {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: className ? `table ${className}` : 'table' },
      h('caption', { class: 'visually-hidden' }, caption),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          columns.map((c) =>
            h('th', { scope: 'col' }, c || h('span', { class: 'visually-hidden' }, 'Actions')),
          ),
        ),
      ),
      h('tbody', {}, rows),
    ),
  );
}

/**
 * A section of a page named by its heading, the h2 `${id}-title` (the landmark's label for screen
 * readers). With a null `title` the content holds that heading (beside a toolbar, say): build it
 * with sectionHeading.
 * @param {string} className
 * @param {string} id
 * @param {import('./dom.js').Child} title
 * @param {...import('./dom.js').Child} content
 */
export function titledSection(className, id, title, ...content) {
  return h(
    'section',
    { class: className, 'aria-labelledby': `${id}-title` },
    title === null ? null : sectionHeading(id, title),
    content,
  );
}

/**
 * The heading that names the section `id`.
 * @param {string} id
 * @param {import('./dom.js').Child} title
 * @param {string} [className]
 */
export function sectionHeading(id, title, className) {
  return h('h2', { id: `${id}-title`, class: className }, title);
}

/**
 * A section of a page as a card, named by its heading.
 * @param {string} id the heading is `${id}-title`
 * @param {import('./dom.js').Child} title
 * @param {...import('./dom.js').Child} content
 */
export function cardSection(id, title, ...content) {
  return titledSection('card', id, title, ...content);
}

/**
 * A paragraph of secondary text (what a section is for).
 * @param {...import('./dom.js').Child} content
 */
export function muted(...content) {
  return h('p', { class: 'muted' }, content);
}

/**
 * A table cell with its column's name, which a narrow screen shows beside the value (the table's
 * rows become label/value lists there, styles.css).
 * @param {string} label
 * @param {...import('./dom.js').Child} content
 */
export function cell(label, ...content) {
  return h('td', { 'data-label': label }, content);
}

/**
 * What an empty list shows: what is missing, then what to do about it.
 * @param {string} title
 * @param {...import('./dom.js').Child} next
 */
export function emptyState(title, ...next) {
  return h('div', { class: 'empty' }, h('p', { class: 'empty-title' }, title), h('p', {}, next));
}

/**
 * A list loaded from the API into `slot`, or the error there: the list, or null when it failed.
 * @template T
 * @param {HTMLElement} slot
 * @param {string} path
 * @param {string} failure the error banner's title
 * @returns {Promise<T | null>}
 */
export async function loadInto(slot, path, failure) {
  try {
    return await api('GET', path);
  } catch (error) {
    replaceChildren(slot, errorBanner(error, failure));
    return null;
  }
}

/**
 * A button's text with more for screen readers (which row it acts on): the visible words come
 * first in the accessible name, so voice control finds the button by what it shows.
 * @param {string} visible
 * @param {string} more
 */
export function buttonText(visible, more) {
  return [visible, h('span', { class: 'visually-hidden' }, ` ${more}`)];
}

/**
 * A secret or link the API shows once: the value to select or copy, and what happens to it.
 * @param {{ title: string, label: string, value: string, note: import('./dom.js').Child,
 *   expiresAt?: string, testid: string }} options
 */
export function oneTimeSecret({ title, label, value, note, expiresAt, testid }) {
  const copy = h(
    'button',
    { type: 'button', class: 'button button-small', 'aria-label': `Copy ${label}` },
    'Copy',
  );
  copy.addEventListener('click', () => copyText(copy, value, label));
  const box = h(
    'div',
    { class: 'banner banner-success secret', role: 'status', 'data-testid': testid },
    h('p', { class: 'banner-title' }, title),
    h(
      'div',
      { class: 'secret-row' },
      h('code', { class: 'secret-value', 'data-field': 'secret' }, value),
      copy,
    ),
    h('p', {}, note),
    expiresAt ? h('p', { class: 'small' }, 'Works once, until ', time(expiresAt), '.') : null,
  );
  announce(title);
  return box;
}

/**
 * Shows a modal dialog built by the caller: `close` (or Escape) closes it, which removes it and
 * puts focus back on `trigger` when that is still on the page.
 * @param {HTMLDialogElement} dialog
 * @param {HTMLElement} close
 * @param {HTMLElement | null | undefined} trigger
 */
export function showDialog(dialog, close, trigger) {
  close.addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => {
    dialog.remove();
    if (trigger?.isConnected) trigger.focus();
  });
  document.body.append(dialog);
  dialog.showModal();
}

/**
 * Asks before an action that cannot be undone. The action runs on Confirm; its error (a 409
 * last_owner, say) is shown inside the dialog, which stays open. Answers whether it ran. Focus
 * goes back to `trigger`, or wherever `focusAfter` says (the trigger may have been redrawn, or
 * gone with what was removed); `signal` closes the dialog when the page is left. `details` come
 * after the body (a list of what breaks, say), in a `wide` dialog where they need the room.
 * @param {{ title: string, body: import('./dom.js').Child, confirm: string, busy: string,
 *   danger?: boolean, action: () => Promise<void>, failure?: string, trigger?: HTMLElement | null,
 *   focusAfter?: (done: boolean) => HTMLElement | null | undefined, signal?: AbortSignal,
 *   details?: import('./dom.js').Child, wide?: boolean, testid?: string }} options
 * @returns {Promise<boolean>}
 */
export function confirmAction({
  title,
  body,
  confirm,
  busy,
  danger = true,
  action,
  failure = `Could not ${confirm.toLowerCase()}`,
  trigger,
  focusAfter = () => (trigger?.isConnected ? trigger : null),
  signal,
  details = null,
  wide = false,
  testid,
}) {
  const errorSlot = h('div', { class: 'slot' });
  const cancelButton = h('button', { type: 'button', class: 'button', autofocus: true }, 'Cancel');
  const confirmButton = h(
    'button',
    { type: 'button', class: `button ${danger ? 'button-danger' : 'button-primary'}` },
    confirm,
  );
  const dialog = h(
    'dialog',
    {
      class: wide ? 'dialog dialog-wide' : 'dialog',
      'aria-labelledby': 'confirm-title',
      'aria-describedby': 'confirm-body',
      'data-testid': testid,
    },
    h('h2', { id: 'confirm-title' }, title),
    h('p', { id: 'confirm-body' }, body),
    details,
    errorSlot,
    h('div', { class: 'dialog-actions' }, cancelButton, confirmButton),
  );
  document.body.append(dialog);
  return new Promise((resolve) => {
    let done = false;
    cancelButton.addEventListener('click', () => dialog.close());
    signal?.addEventListener('abort', () => dialog.close());
    dialog.addEventListener('close', () => {
      dialog.remove();
      focusAfter(done)?.focus();
      resolve(done);
    });
    confirmButton.addEventListener('click', async () => {
      confirmButton.disabled = true;
      confirmButton.textContent = busy;
      replaceChildren(errorSlot);
      try {
        await action();
        done = true;
        dialog.close();
      } catch (error) {
        replaceChildren(errorSlot, errorBanner(error, failure));
        confirmButton.disabled = false;
        confirmButton.textContent = confirm;
      }
    });
    dialog.showModal();
  });
}

/**
 * A row's small button that asks first (confirmAction, with the button as its trigger) and runs
 * `then` once the action has run: Revoke, Remove and the like. `label` shows, `context` completes
 * it for screen readers (buttonText); `danger` is the button's look, `confirm.danger` the dialog's.
 * @param {{ label: string, context: string, danger?: boolean }} button
 * @param {Omit<Parameters<typeof confirmAction>[0], 'trigger'>} confirm
 * @param {() => unknown} then
 */
export function confirmButton({ label, context, danger = false }, confirm, then) {
  const button = h(
    'button',
    { type: 'button', class: danger ? 'button button-small danger' : 'button button-small' },
    buttonText(label, context),
  );
  button.addEventListener('click', async () => {
    if (await confirmAction({ ...confirm, trigger: button })) await then();
  });
  return button;
}

/**
 * Runs a form's submission with its button busy and errors in `errorSlot`; `onError` may pick a
 * title for the banner (or handle the error itself by returning null).
 * @param {HTMLButtonElement} submit
 * @param {HTMLElement} errorSlot
 * @param {string} busyLabel
 * @param {() => Promise<void>} work
 * @param {(error: any) => string | null} [onError]
 */
export async function submitting(submit, errorSlot, busyLabel, work, onError) {
  const label = submit.textContent ?? '';
  submit.disabled = true;
  submit.textContent = busyLabel;
  replaceChildren(errorSlot);
  try {
    await work();
  } catch (error) {
    const title = onError ? onError(error) : 'Something went wrong';
    if (title !== null) replaceChildren(errorSlot, errorBanner(error, title));
  } finally {
    submit.disabled = false;
    submit.textContent = label;
  }
}

/**
 * A form whose submission runs `work` with its button busy; an error shows in `errorSlot`, which
 * describes the form, under the title `onError` picks (see submitting). The fields are laid out
 * in a grid unless `className` says otherwise. The submit button comes after the fields: full
 * width (`block`), or in a row of its own.
 * @param {{ className?: string, errorSlot: HTMLElement, submitLabel: string, busy: string,
 *   work: () => Promise<void>, onError: (error: any) => string | null, block?: boolean }} options
 * @param {...import('./dom.js').Child} fields
 */
export function submitForm(
  { className = 'stack form-grid', errorSlot, submitLabel, busy, work, onError, block = false },
  ...fields
) {
  const submit = h(
    'button',
    { type: 'submit', class: block ? 'button button-primary button-block' : 'button button-primary' },
    submitLabel,
  );
  return h(
    'form',
    {
      class: className,
      'aria-describedby': errorSlot.id,
      onsubmit: onSubmit(submit, errorSlot, busy, work, onError),
    },
    fields,
    block ? submit : h('div', {}, submit),
  );
}

/**
 * The form of a page that creates one thing: a card named by a heading for screen readers only,
 * a slot for the API's error on top, the fields, and the submit button; `onsubmit` does the rest.
 * @param {{ id: string, title: string, submitLabel: string, onsubmit: (event: SubmitEvent) => void }} options
 * @param {...import('./dom.js').Child} fields
 */
export function creationForm({ id, title, submitLabel, onsubmit }, ...fields) {
  const formError = h('div', { class: 'slot' });
  const submit = h('button', { type: 'submit', class: 'button button-primary' }, submitLabel);
  const form = h(
    'form',
    { class: 'card stack form-card', novalidate: true, 'aria-labelledby': `${id}-title`, onsubmit },
    h('h2', { id: `${id}-title`, class: 'visually-hidden' }, title),
    formError,
    fields,
    h('div', { class: 'form-actions' }, submit),
  );
  return { form, formError, submit };
}

/**
 * A form's submit listener: stops the page load and runs `submitting` with these arguments.
 * @param {Parameters<typeof submitting>} args
 * @returns {(event: SubmitEvent) => void}
 */
export function onSubmit(...args) {
  return (event) => {
    event.preventDefault();
    void submitting(...args);
  };
}
