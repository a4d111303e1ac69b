// @ts-check
import { api, slugPath } from './api.js';
import { changeList, changeSummary } from './deploy-changes.js';
import { documentText } from './deploy-documents.js';
import { announce, errorBanner, h, replaceChildren } from './dom.js';
import { formField, muted } from './widgets.js';

/**
 * Two deploys side by side: the changes from one to the other (compareDeploys, the same engine as
 * the deploy gate) and both documents, lines that only one of them has marked.
 */

/** @typedef {import('./types.js').Deploy} Deploy */
/** @typedef {import('./types.js').Change} Change */

/** Past this many lines a document is shown without marks (a line per element would be slow). */
const MARKED_LINES = 20_000;

/** @param {Deploy} deploy */
const deployLabel = (deploy) =>
  `#${deploy.number}${deploy.active ? ' (live)' : ''}${deploy.preview ? ' (preview)' : ''}`;

/**
 * A document's lines, each marked when the other document does not have it (as often: a moved
 * line counts as kept). Cheap enough for any size, unlike a line diff.
 * @param {string} text
 * @param {string} other
 * @param {string} label
 */
function documentColumn(text, other, label) {
  const lines = text.split('\n');
  const code = h('code', {});
  if (lines.length > MARKED_LINES) code.textContent = text;
  else {
    /** @type {Map<string, number>} */
    const theirs = new Map();
    for (const line of other.split('\n')) theirs.set(line, (theirs.get(line) ?? 0) + 1);
    for (const line of lines) {
      const left = theirs.get(line) ?? 0;
      if (left > 0) {
        theirs.set(line, left - 1);
        code.append(`${line}\n`);
      } else code.append(h('mark', { class: 'line-only' }, line), '\n');
    }
  }
  return h(
    'figure',
    { class: 'compare-column' },
    h('figcaption', {}, label),
    h('pre', { class: 'document-text', tabindex: '0', 'aria-label': `${label}, JSON` }, code),
  );
}

/**
 * The Compare section of the Deploys page, for the project's succeeded deploys (newest first).
 * Starts with the live deploy against the one before it.
 * @param {string} slug
 * @param {Deploy[]} deploys
 */
export function compareSection(slug, deploys) {
  const documented = deploys.filter((d) => d.status === 'succeeded');
  if (documented.length < 2) {
    return muted('Two deploys with a document are needed to compare them.');
  }
  const liveIndex = Math.max(
    0,
    documented.findIndex((d) => d.active),
  );
  const revisionDefault = documented[liveIndex] ?? documented[0];
  const baseDefault = documented[liveIndex + 1] ?? documented[1];
  /** @param {string} name @param {Deploy | undefined} chosen */
  const select = (name, chosen) =>
    h(
      'select',
      { name },
      documented.map((d) =>
        h('option', { value: String(d.id), selected: d.id === chosen?.id ? true : null }, deployLabel(d)),
      ),
    );
  const base = formField({ id: 'compare-base', label: 'From deploy', control: select('base', baseDefault) });
  const revision = formField({
    id: 'compare-revision',
    label: 'To deploy',
    control: select('revision', revisionDefault),
  });
  const submit = h('button', { type: 'submit', class: 'button' }, 'Compare');
  const result = h('div', { class: 'compare-result', 'data-testid': 'compare-result' });
  const form = h(
    'form',
    { class: 'compare-form', 'aria-label': 'Deploys to compare', onsubmit: compare },
    base.element,
    revision.element,
    h('div', { class: 'form-actions' }, submit),
  );

  /** @param {SubmitEvent} event */
  async function compare(event) {
    event.preventDefault();
    const from = documented.find((d) => String(d.id) === base.control.value);
    const to = documented.find((d) => String(d.id) === revision.control.value);
    if (!from || !to) return;
    submit.disabled = true;
    replaceChildren(result, h('p', { class: 'loading', role: 'status' }, 'Comparing…'));
    try {
      const [answer, fromText, toText] = await Promise.all([
        api('GET', `${slugPath(slug)}/deploys/${to.id}/changes?against=${from.id}`),
        documentText(slug, from.id, 'json'),
        documentText(slug, to.id, 'json'),
      ]);
      /** @type {Change[]} */
      const changes = answer.changes;
      const title = `From #${from.number} to #${to.number}: ${changeSummary(changes).toLowerCase()}`;
      replaceChildren(
        result,
        h('h3', { class: 'compare-title' }, title),
        changeList(changes, from.id === to.id ? 'The same deploy.' : 'Nothing changed for callers.'),
        h(
          'div',
          { class: 'compare-columns' },
          documentColumn(fromText, toText, `Deploy ${deployLabel(from)}`),
          documentColumn(toText, fromText, `Deploy ${deployLabel(to)}`),
        ),
      );
      announce(title);
    } catch (error) {
      replaceChildren(result, errorBanner(error, 'The deploys could not be compared'));
    } finally {
      submit.disabled = false;
    }
  }

  return h('div', { class: 'compare' }, form, result);
}
