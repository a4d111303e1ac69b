// @ts-check
import { ApiError, api, parseJson, send, slugPath } from './api.js';
import { announce, errorBanner, h, replaceChildren } from './dom.js';
import { showDialog } from './widgets.js';

/**
 * A deploy's stored document (getDeployDocument): shown in a dialog, downloaded as JSON or YAML,
 * and read for the side-by-side comparison.
 */

/** @typedef {import('./types.js').Deploy} Deploy */

/**
 * @param {string} slug
 * @param {number} deployId
 */
export const documentPath = (slug, deployId) => `${slugPath(slug)}/deploys/${deployId}/document`;

/**
 * The document as text: JSON pretty-printed (the form the comparison lines up), or YAML as the
 * platform writes it (`?format=yaml`).
 * @param {string} slug
 * @param {number} deployId
 * @param {'json' | 'yaml'} format
 * @returns {Promise<string>}
 */
export async function documentText(slug, deployId, format) {
  if (format === 'json') return JSON.stringify(await api('GET', documentPath(slug, deployId)), null, 2);
  const answer = await send(
    `${documentPath(slug, deployId)}?format=yaml`,
    { headers: { accept: 'application/yaml, application/json' } },
    'The platform could not be reached. Try again.',
  );
  if (!answer.ok) throw new ApiError(answer.status, parseJson(answer.text));
  return answer.text;
}

/**
 * Saves the document as `<slug>-deploy-<number>.<json|yaml>` through a download link.
 * @param {string} slug
 * @param {Deploy} deploy
 * @param {'json' | 'yaml'} format
 */
export async function downloadDocument(slug, deploy, format) {
  const text = await documentText(slug, deploy.id, format);
  const type = format === 'json' ? 'application/json' : 'application/yaml';
  const url = URL.createObjectURL(new Blob([text], { type }));
  const name = `${slug}-deploy-${deploy.number}.${format}`;
  const link = h('a', { href: url, download: name, class: 'visually-hidden' }, name);
  document.body.append(link);
  link.click();
  link.remove();
  // The browser has read the blob once the click's navigation started.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  announce(`${name} downloaded.`);
}

/**
 * A dialog with the deploy's document and its downloads. Focus returns to `trigger`.
 * @param {string} slug
 * @param {Deploy} deploy
 * @param {HTMLElement} [trigger]
 */
export async function showDocument(slug, deploy, trigger) {
  const body = h('div', { class: 'document-view' }, h('p', { class: 'loading' }, 'Loading the document…'));
  const errorSlot = h('div', { class: 'slot' });
  /** @param {'json' | 'yaml'} format */
  const downloadButton = (format) => {
    const button = h(
      'button',
      { type: 'button', class: 'button button-small' },
      `Download ${format.toUpperCase()}`,
    );
    button.addEventListener('click', async () => {
      replaceChildren(errorSlot);
      try {
        await downloadDocument(slug, deploy, format);
      } catch (error) {
        replaceChildren(errorSlot, errorBanner(error, 'Could not download the document'));
      }
    });
    return button;
  };
  const close = h('button', { type: 'button', class: 'button', autofocus: true }, 'Close');
  const dialog = h(
    'dialog',
    {
      class: 'dialog dialog-document',
      'aria-labelledby': 'document-title',
      'data-testid': 'document-dialog',
    },
    h('h2', { id: 'document-title' }, `Deploy #${deploy.number}: the document`),
    body,
    errorSlot,
    h('div', { class: 'dialog-actions' }, downloadButton('json'), downloadButton('yaml'), close),
  );
  showDialog(dialog, close, trigger);
  try {
    const text = await documentText(slug, deploy.id, 'json');
    replaceChildren(
      body,
      h(
        'pre',
        { class: 'document-text', tabindex: '0', 'aria-label': `Deploy #${deploy.number}'s document, JSON` },
        h('code', {}, text),
      ),
    );
  } catch (error) {
    replaceChildren(body, errorBanner(error, 'The document could not be loaded'));
  }
}
