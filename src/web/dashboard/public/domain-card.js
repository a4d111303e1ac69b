// @ts-check
import { h, time } from './dom.js';
import { actionsMenu } from './domain-menu.js';
import { recordsTable } from './domain-records.js';
import {
  inPage,
  lowerFirst,
  REASON_LABELS,
  reasonLabel,
  redirectLabel,
  STATUS_LABELS,
  statusSentence,
} from './domain-words.js';

/** @typedef {import('./domains-api.js').Domain} Domain */
/** @typedef {import('./domains-api.js').Redirect} Redirect */

/**
 * A message shown on a card until the next change: the outcome of a click, a warning at Add.
 * `reason` is machine-readable and goes into a data attribute, never into the text.
 * @typedef {object} Notice
 * @property {'success' | 'pending' | 'warning' | 'error'} kind
 * @property {string} title
 * @property {string} [message]
 * @property {string} [remedy]
 * @property {string} [reason]
 * @property {boolean} [transient] gives way once the domain's status changes
 */

/**
 * What the domain does for the project, from the domain configuration.
 * @typedef {object} DomainRole
 * @property {boolean} primary
 * @property {{ to: string, status: import('./domains-api.js').RedirectStatus } | null} redirect
 *   `to` as people read it
 * @property {string} defaultHost the project's default address
 */

/**
 * @typedef {object} CardOptions
 * @property {Domain} domain
 * @property {DomainRole} role
 * @property {Notice | undefined} notice
 * @property {boolean} busy a click on this domain is under way
 * @property {number} id stable per hostname, for element ids
 * @property {(domain: Domain, action: 'verify' | 'reverify') => void} onCheck
 * @property {(domain: Domain, trigger: HTMLElement) => void} onRemove
 */

/** @param {Notice['kind']} kind */
const bannerClass = (kind) =>
  ({ success: 'banner-success', pending: 'banner-info', warning: 'banner-warning', error: 'banner-error' })[
    kind
  ];

/** @param {string} remedy */
const remedyLine = (remedy) => h('p', { class: 'remedy' }, h('strong', {}, 'What to do: '), inPage(remedy));

/**
 * One domain: its name, status in words, what it does (primary, redirect), the records, the
 * actions and the times (added, last and next check, Re-verify, certificate).
 * @param {CardOptions} options
 */
export function domainCard({ domain, role, notice, busy, id, onCheck, onRemove }) {
  const titleId = `domain-${id}-title`;
  return h(
    'article',
    {
      class: `card domain status-${domain.status}`,
      'aria-labelledby': titleId,
      dataset: { hostname: domain.hostname, status: domain.status, reason: domain.reason ?? '' },
    },
    h(
      'header',
      { class: 'domain-head' },
      h(
        'div',
        { class: 'domain-name' },
        h(
          'div',
          { class: 'domain-title' },
          h('h3', { id: titleId, tabindex: '-1' }, domain.unicode),
          h(
            'span',
            { class: `badge badge-${domain.status}`, dataset: { testid: 'status' } },
            STATUS_LABELS[domain.status] ?? 'Unknown',
          ),
          roleBadges(role),
        ),
        domain.unicode !== domain.hostname
          ? h('p', { class: 'muted small' }, h('code', {}, domain.hostname))
          : null,
      ),
      actionsMenu({ label: domain.unicode, id, onRemove: (trigger) => onRemove(domain, trigger) }),
    ),
    h('p', { class: 'status-line' }, statusSentence(domain)),
    roleLine(domain, role),
    domain.failure ? failureBox(domain) : waitingNote(domain),
    notice ? noticeBox(notice) : null,
    recordsTable(domain, id),
    actions(domain, id, busy, onCheck),
    meta(domain),
  );
}

/** @param {DomainRole} role */
function roleBadges(role) {
  return [
    role.primary ? h('span', { class: 'badge badge-role', dataset: { testid: 'primary' } }, 'Primary') : null,
    role.redirect
      ? h(
          'span',
          { class: 'badge badge-role', dataset: { testid: 'redirect' } },
          redirectLabel(role.redirect.to, role.redirect.status),
        )
      : null,
  ];
}

/**
 * When the role takes effect: the edge redirects only from a served domain, and the default
 * address redirects to the primary only once it is live (src/platform/publishing/routes.ts).
 * @param {Domain} domain
 * @param {DomainRole} role
 */
function roleLine(domain, role) {
  if (role.primary) {
    return h(
      'p',
      { class: 'role-line' },
      'Primary domain: ',
      h('code', {}, role.defaultHost),
      domain.status === 'live'
        ? ' redirects its pages here (308); its API under /api/ stays served there.'
        : ' will redirect its pages here (308) once this domain is live.',
    );
  }
  if (role.redirect) {
    const served = domain.state === 'verified' || domain.state === 'misconfigured';
    return h(
      'p',
      { class: 'role-line' },
      served ? 'Every request here is redirected to ' : 'Once verified, every request here is redirected to ',
      h('code', {}, role.redirect.to),
      ` with status ${role.redirect.status}, path and query kept.`,
    );
  }
  return null;
}

/** @param {Domain} domain */
function failureBox(domain) {
  const failure = /** @type {NonNullable<Domain['failure']>} */ (domain.failure);
  const words = reasonLabel(failure.reason);
  const title = domain.state === 'misconfigured' ? `DNS no longer points here: ${lowerFirst(words)}` : words;
  return h(
    'div',
    { class: 'banner banner-error', dataset: { testid: 'failure', reason: failure.reason } },
    h('p', { class: 'banner-title' }, REASON_LABELS[failure.reason] ? title : 'Verification failed'),
    failure.message ? h('p', {}, failure.message) : null,
    remedyLine(failure.remedy),
  );
}

/** @param {Domain} domain */
function waitingNote(domain) {
  if (domain.status !== 'unverified' || !domain.lastCheckedAt || !domain.message) return null;
  return h(
    'div',
    { class: 'banner banner-info', dataset: { testid: 'waiting', reason: domain.reason ?? '' } },
    h(
      'p',
      { class: 'banner-title' },
      'Waiting for DNS',
      domain.reason ? h('span', { class: 'reason-tag' }, reasonLabel(domain.reason)) : null,
    ),
    h('p', {}, domain.message),
    domain.remedy ? remedyLine(domain.remedy) : null,
  );
}

/** @param {Notice} notice */
function noticeBox(notice) {
  return h(
    'div',
    {
      class: `banner ${bannerClass(notice.kind)}`,
      dataset: { testid: 'notice', reason: notice.reason ?? '' },
    },
    h('p', { class: 'banner-title' }, notice.title),
    notice.message ? h('p', {}, notice.message) : null,
    notice.remedy ? remedyLine(notice.remedy) : null,
  );
}

/**
 * Verify while DNS is not (or no longer) verified; Re-verify for a verified domain without a
 * certificate, disabled until the time the platform offers it, which is shown next to it.
 * @param {Domain} domain
 * @param {number} id
 * @param {boolean} busy
 * @param {CardOptions['onCheck']} onCheck
 */
function actions(domain, id, busy, onCheck) {
  const buttons = [];
  if (domain.state === 'unverified' || domain.state === 'misconfigured') {
    buttons.push(
      h(
        'button',
        {
          type: 'button',
          class: 'button button-primary',
          dataset: { focus: 'verify' },
          disabled: busy,
          onclick: () => onCheck(domain, 'verify'),
        },
        busy ? 'Verifying…' : 'Verify',
      ),
    );
  }
  if (domain.reverifyAvailableAt) {
    const hintId = `domain-${id}-reverify`;
    buttons.push(
      h(
        'button',
        {
          type: 'button',
          class: 'button',
          dataset: { focus: 'reverify' },
          disabled: busy || !domain.reverifyAvailable,
          'aria-describedby': hintId,
          onclick: () => onCheck(domain, 'reverify'),
        },
        busy ? 'Checking…' : 'Re-verify',
      ),
      h(
        'p',
        { id: hintId, class: 'action-hint', dataset: { testid: 'reverify-at' } },
        domain.reverifyAvailable
          ? 'No certificate has come yet: confirm the record, then Re-verify starts a fresh attempt.'
          : ['Available from ', time(domain.reverifyAvailableAt), ', if no certificate has come by then.'],
      ),
    );
  }
  return buttons.length ? h('div', { class: 'actions' }, buttons) : null;
}

/** @param {Domain} domain */
function nextCheck(domain) {
  if (domain.nextCheckAt) return time(domain.nextCheckAt);
  return domain.state === 'unverified' ? 'None scheduled: click Verify to check now' : 'None scheduled';
}

/** @param {Domain} domain */
function meta(domain) {
  /**
   * @param {string} label
   * @param {import('./dom.js').Child} value
   * @param {string} [testid]
   */
  const item = (label, value, testid) =>
    h('div', { dataset: testid ? { testid } : {} }, h('dt', {}, label), h('dd', {}, value));
  return h(
    'dl',
    { class: 'domain-meta' },
    item('Added', time(domain.createdAt)),
    item('Last checked', domain.lastCheckedAt ? time(domain.lastCheckedAt) : 'Not yet'),
    item('Next automatic check', nextCheck(domain), 'next-check'),
    domain.certificate?.notAfter ? item('Certificate valid until', time(domain.certificate.notAfter)) : null,
  );
}
