// @ts-check
import { slugPath } from './api.js';
import { changeDetails } from './deploy-changes.js';
import { shareButton } from './deploy-share.js';
import { h, time } from './dom.js';
import { buttonText, cell, dataTable } from './widgets.js';

/**
 * The Deploys page's history: each deploy by its number, who made it and when, its changes
 * against the deploy that was live then, and what can be done with it (its document, Promote,
 * Open preview, Share).
 */

/** @typedef {import('./types.js').Deploy} Deploy */

/**
 * Where "Open preview" goes: the platform hands a member over to the preview's private address
 * (openPreview answers 303 there with a one-time token), so the link opens in a new tab.
 * @param {string} slug
 * @param {Deploy} deploy
 */
export const previewAddress = (slug, deploy) => `${slugPath(slug)}/deploys/${deploy.id}/preview-access`;

/**
 * @param {string} slug
 * @param {Deploy} deploy
 */
export function openPreviewLink(slug, deploy) {
  return h(
    'a',
    {
      class: 'button button-small',
      href: previewAddress(slug, deploy),
      target: '_blank',
      rel: 'noopener',
    },
    ...buttonText('Open preview', `of deploy #${deploy.number} (opens a new tab)`),
  );
}

/**
 * @param {{ slug: string, deploys: Deploy[],
 *   onView: (deploy: Deploy, trigger: HTMLElement) => void,
 *   onPromote: (deploy: Deploy, trigger: HTMLElement) => void,
 *   problemList: (problems: string[]) => HTMLElement }} options
 */
export function historyTable({ slug, deploys, onView, onPromote, problemList }) {
  return dataTable({
    caption: 'Deploy history, newest first',
    columns: ['Deploy', 'Status', 'Changes', 'Made', ''],
    className: 'deploy-table',
    rows: deploys.map((d) => {
      /** @type {HTMLElement[]} */
      const actions = [];
      if (d.status === 'succeeded') {
        const view = h(
          'button',
          { type: 'button', class: 'button button-small' },
          ...buttonText('Document', `of deploy #${d.number}`),
        );
        view.addEventListener('click', () => onView(d, view));
        actions.push(view);
        if (!d.active) {
          const promote = h(
            'button',
            { type: 'button', class: 'button button-small' },
            ...buttonText('Promote', `deploy #${d.number}: make it live`),
          );
          promote.addEventListener('click', () => onPromote(d, promote));
          actions.push(promote);
        }
        if (d.preview && !d.active) actions.push(openPreviewLink(slug, d), shareButton(slug, d));
      }
      return h(
        'tr',
        {
          'data-deploy': String(d.id),
          'data-number': String(d.number),
          'data-live': d.active ? 'true' : null,
          'data-preview': d.preview ? 'true' : null,
        },
        cell(
          'Deploy',
          h(
            'div',
            { class: 'deploy-marks' },
            h('span', { class: 'deploy-id' }, `#${d.number}`),
            d.active ? h('span', { class: 'badge badge-live' }, 'Live') : null,
            d.preview ? h('span', { class: 'badge badge-preview' }, 'Preview') : null,
          ),
        ),
        cell(
          'Status',
          h(
            'div',
            {},
            d.status === 'succeeded'
              ? h('span', { class: 'status-ok' }, d.active ? 'Succeeded, serving' : 'Succeeded')
              : h('span', { class: 'status-failed' }, 'Failed: not published'),
            d.problems.length > 0
              ? h(
                  'details',
                  { class: 'problems-details' },
                  h('summary', {}, d.problems.length === 1 ? '1 problem' : `${d.problems.length} problems`),
                  problemList(d.problems),
                )
              : null,
          ),
        ),
        cell(
          'Changes',
          d.status === 'succeeded' ? changeDetails(d.changes) : h('span', { class: 'muted' }, '—'),
        ),
        cell(
          'Made',
          h(
            'div',
            { class: 'deploy-made' },
            time(d.createdAt),
            h(
              'span',
              { class: 'muted deploy-author' },
              d.createdBy ? `by ${d.createdBy}` : 'by the platform',
            ),
            h(
              'span',
              { class: 'muted small' },
              `${d.sourceFormat.toUpperCase()}, origin `,
              h('code', { class: 'break' }, d.originUrl),
            ),
          ),
        ),
        h('td', { class: 'row-actions' }, h('div', { class: 'actions' }, actions)),
      );
    }),
  });
}
