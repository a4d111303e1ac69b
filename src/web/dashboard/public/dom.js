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

/** The formatters of one locale and time zone ('' for the browser's own), made once. */
/** @type {Map<string, { dated: Intl.DateTimeFormat, zone: Intl.DateTimeFormat }>} */
const formats = new Map();

/**
 * @param {string | undefined} locale
 * @param {string | undefined} timeZone
 */
function formatsOf(locale, timeZone) {
  const key = `${locale ?? ''} ${timeZone ?? ''}`;
  let found = formats.get(key);
  if (!found) {
    // dateStyle cannot be combined with timeZoneName: the zone is read from a second formatter.
    found = {
      dated: new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone }),
      zone: new Intl.DateTimeFormat(locale, { timeZoneName: 'short', timeZone }),
    };
    formats.set(key, found);
  }
  return found;
}

/**
 * Every date and time the dashboard shows, with its time zone: "27 Nov 2026, 14:03 UTC" (the
 * browser's locale and zone; tests pass both). "—" for none; a text that is no date as it is.
 * @param {string | null | undefined} iso
 * @param {{ locale?: string, timeZone?: string }} [options]
 */
export function formatDate(iso, { locale, timeZone } = {}) {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const { dated, zone } = formatsOf(locale, timeZone);
  const tz = zone.formatToParts(date).find((p) => p.type === 'timeZoneName')?.value ?? '';
  return `${dated.format(date)} ${tz}`.trim();
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
