// @ts-check
import { api, slugPath } from './api.js';
import { announce, errorBanner, formatDate, h, replaceChildren, time } from './dom.js';
import {
  buttonText,
  cell,
  confirmAction,
  dataTable,
  formField,
  muted,
  oneTimeSecret,
  showDialog,
} from './widgets.js';

/**
 * A preview's share links (createPreviewLink, listPreviewLinks, revokePreviewLink): whoever holds
 * one opens the preview until it expires or a team member revokes it. The link itself is shown
 * once, when it is made; the list shows each link's maker, expiry and state.
 */

/** @typedef {import('./types.js').Deploy} Deploy */
/**
 * @typedef {{ id: number, deployId: number, host: string, createdBy: string | null,
 *   createdAt: string, expiresAt: string, revokedAt: string | null, active: boolean }} PreviewLink
 */

/** How long a new link lasts: the choices offered (seconds), a week by default as the API's. */
const LIFETIMES = [
  [3600, '1 hour'],
  [86_400, '1 day'],
  [604_800, '7 days'],
  [2_592_000, '30 days'],
];

/**
 * @param {string} slug
 * @param {number} deployId
 */
const linksPath = (slug, deployId) => `${slugPath(slug)}/deploys/${deployId}/links`;

/** @param {PreviewLink} link */
const stateOf = (link) => (link.revokedAt ? 'Revoked' : link.active ? 'Active' : 'Expired');

/**
 * The "Share" button of a preview in the history; opens the share dialog.
 * @param {string} slug
 * @param {Deploy} deploy
 */
export function shareButton(slug, deploy) {
  const button = h(
    'button',
    { type: 'button', class: 'button button-small' },
    ...buttonText('Share', `preview #${deploy.number} with a link`),
  );
  button.addEventListener('click', () => void shareDialog(slug, deploy, button));
  return button;
}

/**
 * The dialog: make a link (its lifetime chosen), see it once with Copy, and the preview's links
 * with Revoke for the active ones. Focus returns to `trigger`.
 * @param {string} slug
 * @param {Deploy} deploy
 * @param {HTMLElement} [trigger]
 */
export async function shareDialog(slug, deploy, trigger) {
  const created = h('div', { class: 'slot' });
  const errorSlot = h('div', { class: 'slot' });
  const listSlot = h('div', { class: 'slot' }, h('p', { class: 'loading' }, 'Loading the links…'));
  const lifetime = h(
    'select',
    { id: 'share-lifetime', name: 'expiresIn' },
    LIFETIMES.map(([seconds, label]) =>
      h('option', { value: String(seconds), selected: seconds === 604_800 ? true : null }, label),
    ),
  );
  const make = h('button', { type: 'submit', class: 'button button-primary' }, 'Create link');
  const form = h(
    'form',
    { class: 'share-form' },
    formField({
      id: 'share-lifetime',
      label: 'Link works for',
      control: /** @type {HTMLSelectElement} */ (lifetime),
      hint: 'Anyone with the link opens this preview (its reference, document and API) until then.',
    }).element,
    h('div', { class: 'actions' }, make),
  );
  const close = h('button', { type: 'button', class: 'button' }, 'Close');
  const dialog = h(
    'dialog',
    { class: 'dialog', 'aria-labelledby': 'share-title', 'data-testid': 'share-dialog' },
    h('h2', { id: 'share-title' }, `Share preview #${deploy.number}`),
    form,
    created,
    errorSlot,
    h('h3', {}, 'Links to this preview'),
    listSlot,
    h('div', { class: 'dialog-actions' }, close),
  );

  async function refresh() {
    try {
      /** @type {PreviewLink[]} */
      const links = await api('GET', linksPath(slug, deploy.id));
      replaceChildren(listSlot, linkTable(links));
    } catch (error) {
      replaceChildren(listSlot, errorBanner(error, 'The links could not be loaded'));
    }
  }

  /** @param {PreviewLink[]} links */
  function linkTable(links) {
    if (links.length === 0) return muted('No links yet.');
    return dataTable({
      caption: `Share links of preview #${deploy.number}`,
      columns: ['Made', 'Expires', 'State', ''],
      rows: links.map((link) => {
        const revoke = link.active
          ? h(
              'button',
              { type: 'button', class: 'button button-small button-danger' },
              ...buttonText('Revoke', `the link made ${formatDate(link.createdAt)}`),
            )
          : null;
        revoke?.addEventListener('click', async () => {
          const done = await confirmAction({
            title: 'Revoke this link?',
            body: 'Whoever holds it, and every browser that opened it, loses access to the preview at once.',
            confirm: 'Revoke',
            busy: 'Revoking…',
            danger: true,
            action: async () => {
              await api('DELETE', `${linksPath(slug, deploy.id)}/${link.id}`);
            },
            failure: 'The link could not be revoked',
            trigger: revoke,
            focusAfter: () => close,
          });
          if (done) {
            announce('Link revoked.');
            await refresh();
          }
        });
        return h(
          'tr',
          { 'data-link': String(link.id), 'data-state': stateOf(link).toLowerCase() },
          cell('Made', time(link.createdAt), link.createdBy ? ` by ${link.createdBy}` : ''),
          cell('Expires', time(link.expiresAt)),
          cell('State', stateOf(link)),
          h('td', { class: 'row-actions' }, revoke),
        );
      }),
    });
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    replaceChildren(errorSlot);
    make.setAttribute('disabled', '');
    try {
      /** @type {PreviewLink & { url: string }} */
      const link = await api('POST', linksPath(slug, deploy.id), {
        expiresIn: Number(/** @type {HTMLSelectElement} */ (lifetime).value),
      });
      replaceChildren(
        created,
        oneTimeSecret({
          title: 'Share link created',
          label: 'share link',
          value: link.url,
          note: 'Copy it now: it is shown only once. Revoke it below when it should stop working.',
          testid: 'share-link',
        }),
      );
      await refresh();
    } catch (error) {
      replaceChildren(errorSlot, errorBanner(error, 'The link could not be created'));
    } finally {
      make.removeAttribute('disabled');
    }
  });
  showDialog(dialog, close, trigger);
  lifetime.focus();
  await refresh();
}
