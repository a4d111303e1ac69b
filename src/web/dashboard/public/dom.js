// @ts-check
/**
 * A tiny element builder: every text goes in through text nodes, never innerHTML, so nothing the
 * API returns can become markup.
 */
/**
 * A child of an element: nodes as they are, text as text nodes; null, undefined and false are
 * skipped and arrays are flattened, so conditional parts read inline.
 * @typedef {Node | string | number | null | undefined | false | Child[]} Child
 */

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, unknown> | null} [props]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function')
      el.addEventListener(key.slice(2), /** @type {EventListener} */ (value));
    else if (key === 'class') el.className = String(value);
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key === 'value' || key === 'checked' || key === 'disabled') Object.assign(el, { [key]: value });
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

/**
 * @param {Element} el
 * @param {Child[]} children
 */
function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/**
 * @param {Element} el
 * @param {...Child} children
 */
export function replaceChildren(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

/** @type {ReturnType<typeof setTimeout> | undefined} */
let announceTimer;
/** Says something to screen readers through the page's polite live region. */
/** @param {string} message */
export function announce(message) {
  const region = document.getElementById('announcer');
  if (!region) return;
  clearTimeout(announceTimer);
  region.textContent = '';
  announceTimer = setTimeout(() => {
    region.textContent = message;
  }, 50);
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** @param {string | null | undefined} iso */
export function formatDate(iso) {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateFormat.format(date);
}

/** @param {string} iso */
export function time(iso) {
  return h('time', { datetime: iso }, formatDate(iso));
}

/** Copies text and says so on the button for a moment. */
/**
 * @param {HTMLElement} button
 * @param {string} text
 * @param {string} label
 */
export async function copyText(button, text, label) {
  let ok = true;
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    ok = fallbackCopy(text);
  }
  const original = button.dataset.label ?? button.textContent;
  button.dataset.label = original;
  button.textContent = ok ? 'Copied' : 'Copy failed';
  announce(ok ? `${label} copied` : `Could not copy ${label}; select it and copy by hand.`);
  setTimeout(() => {
    button.textContent = original;
  }, 1500);
}

/**
 * Without the async clipboard (plain HTTP on a non-localhost name), a hidden textarea does it.
 * @param {string} text
 */
function fallbackCopy(text) {
  const area = h('textarea', { class: 'visually-hidden', readonly: true, 'aria-hidden': 'true' }, text);
  document.body.append(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  area.remove();
  return ok;
}

/**
 * An error banner: what went wrong and what to do, with the machine-readable code.
 * @param {unknown} thrown an ApiError, an Error or anything thrown
 * @param {string} [title]
 */
export function errorBanner(thrown, title = 'Something went wrong') {
  const error = /** @type {{ message?: string, code?: string } | null | undefined} */ (thrown);
  return h(
    'div',
    { class: 'banner banner-error', role: 'alert' },
    h('p', { class: 'banner-title' }, title),
    h('p', {}, error?.message ?? String(thrown)),
    error?.code ? h('p', { class: 'banner-code' }, 'Code: ', h('code', {}, error.code)) : null,
  );
}
