// @ts-check
import { announce, errorBanner, h, replaceChildren } from './dom.js';
import { REDIRECT_STATUS_LABELS, redirectLabel, redirectProblem } from './domain-words.js';
import { muted } from './widgets.js';

/** @typedef {import('./domains-api.js').Domain} Domain */
/** @typedef {import('./domains-api.js').DomainConfig} DomainConfig */
/** @typedef {import('./domains-api.js').Redirect} Redirect */
/** @typedef {import('./domains-api.js').RedirectStatus} RedirectStatus */

const SERVES = '';
const STATUSES = /** @type {RedirectStatus[]} */ ([301, 308, 302, 307]);

/**
 * The domain configuration as a form (seed 001: `domains.primary`, `domains.redirects[]` with
 * from, to and status): one primary, and for every domain whether it serves the project or
 * redirects, where to and with which status. Choices that the configuration refuses are not
 * offered (a domain redirecting to itself, twice, or the primary redirecting away); a chain (a
 * target that itself redirects) is caught before saving. It writes through the configuration
 * API (PUT domain-config), as `kennel domains apply` does.
 * @param {object} options
 * @param {string} options.defaultHost the project's default address, a valid redirect target
 * @param {(config: { primary: string | null, redirects: Redirect[] }) => Promise<void>} options.save
 */
export function domainSettingsForm({ defaultHost, save }) {
  /** @type {Domain[]} */
  let domains = [];
  /** @type {{ primary: string, redirects: Map<string, { to: string, status: RedirectStatus }> }} */
  let draft = { primary: SERVES, redirects: new Map() };
  /** The user changed something not saved yet: updates from polling do not overwrite it. */
  let dirty = false;
  let shownKey = '';

  const primary = h('select', { id: 'primary-domain', name: 'primary', onchange: changed });
  const rows = h('div', { class: 'redirect-rows' });
  const errorSlot = h('div', { id: 'settings-error' });
  const saveButton = h(
    'button',
    { type: 'submit', class: 'button button-primary' },
    'Save primary and redirects',
  );
  const form = h(
    'form',
    { class: 'settings-form', 'aria-labelledby': 'settings-title', onsubmit: submit, novalidate: true },
    h('h2', { id: 'settings-title' }, 'Primary domain and redirects'),
    muted(
      'Once the primary domain is live, the default address ',
      h('code', {}, defaultHost),
      ' redirects its pages there. A domain that redirects sends every request, path and query kept, to another address.',
    ),
    h('div', { class: 'field' }, h('label', { for: 'primary-domain' }, 'Primary domain'), primary),
    h('fieldset', { class: 'redirects-fieldset' }, h('legend', {}, 'What each domain does'), rows),
    errorSlot,
    h('div', { class: 'actions' }, saveButton),
  );
  const section = h('section', { class: 'card', 'aria-labelledby': 'settings-title', hidden: true }, form);

  /** @param {Event} event */
  function changed(event) {
    dirty = true;
    const target = /** @type {HTMLSelectElement} */ (event.target);
    if (target === primary) draft.primary = primary.value;
    else {
      const from = target.dataset.from ?? '';
      const current = draft.redirects.get(from);
      if (target.dataset.kind === 'to') {
        if (target.value === SERVES) draft.redirects.delete(from);
        else draft.redirects.set(from, { to: target.value, status: current?.status ?? 301 });
      } else if (current) {
        current.status = /** @type {RedirectStatus} */ (Number(target.value));
      }
    }
    // The primary cannot redirect away: choosing it as primary makes it serve.
    draft.redirects.delete(draft.primary);
    draw();
  }

  /** Where `from` may redirect: the other domains and the default address. */
  /** @param {Domain} from */
  const targets = (from) => [
    ...domains
      .filter((d) => d.hostname !== from.hostname)
      .map((d) => ({ value: d.hostname, label: d.unicode })),
    { value: defaultHost, label: `${defaultHost} (default address)` },
  ];

  function draw() {
    const focused = document.activeElement?.id;
    replaceChildren(
      primary,
      h('option', { value: SERVES }, 'None: every domain serves the project'),
      domains.map((d) => h('option', { value: d.hostname }, d.unicode)),
    );
    primary.value = draft.primary;
    replaceChildren(
      rows,
      domains.map((domain, index) => {
        const redirect = draft.redirects.get(domain.hostname);
        const isPrimary = draft.primary === domain.hostname;
        const to = h(
          'select',
          {
            id: `does-${index}`,
            dataset: { from: domain.hostname, kind: 'to' },
            disabled: isPrimary,
            onchange: changed,
          },
          h('option', { value: SERVES }, isPrimary ? 'Serves the project (primary)' : 'Serves the project'),
          isPrimary
            ? null
            : targets(domain).map((t) => h('option', { value: t.value }, `Redirects to ${t.label}`)),
        );
        to.value = redirect?.to ?? SERVES;
        const status = h(
          'select',
          {
            id: `status-${index}`,
            dataset: { from: domain.hostname, kind: 'status' },
            hidden: !redirect,
            onchange: changed,
          },
          STATUSES.map((s) => h('option', { value: String(s) }, REDIRECT_STATUS_LABELS[s])),
        );
        status.value = String(redirect?.status ?? 301);
        return h(
          'div',
          { class: 'redirect-row', dataset: { hostname: domain.hostname } },
          h('label', { for: `does-${index}`, class: 'redirect-host' }, domain.unicode),
          to,
          h(
            'label',
            { for: `status-${index}`, class: 'visually-hidden' },
            `Redirect status of ${domain.unicode}`,
          ),
          status,
        );
      }),
    );
    if (focused) document.getElementById(focused)?.focus();
  }

  /** The draft's chain or loop, in words naming its hosts (domain-words.js), or null. */
  function chainProblem() {
    return redirectProblem(
      [...draft.redirects].map(([from, r]) => [from, r.to]),
      (host) => domains.find((d) => d.hostname === host)?.unicode ?? host,
    );
  }

  /** @param {SubmitEvent} event */
  async function submit(event) {
    event.preventDefault();
    replaceChildren(errorSlot);
    const problem = chainProblem();
    if (problem) {
      replaceChildren(errorSlot, h('p', { class: 'field-error', role: 'alert' }, problem));
      return;
    }
    const config = {
      primary: draft.primary === SERVES ? null : draft.primary,
      redirects: [...draft.redirects].map(([from, r]) => ({ from, to: r.to, status: r.status })),
    };
    saveButton.disabled = true;
    saveButton.textContent = 'Saving…';
    try {
      await save(config);
      dirty = false;
      announce(
        `Saved. Primary domain: ${config.primary ?? 'none'}. ${config.redirects
          .map((r) => `${r.from}: ${redirectLabel(r.to, r.status)}.`)
          .join(' ')}`,
      );
    } catch (error) {
      replaceChildren(errorSlot, errorBanner(inPlace(error), 'Nothing was changed'));
    } finally {
      saveButton.disabled = false;
      saveButton.textContent = 'Save primary and redirects';
    }
  }

  return {
    section,
    /**
     * Shows the project's domains and saved configuration, unless the user is editing.
     * @param {Domain[]} list
     * @param {DomainConfig} config
     */
    update(list, config) {
      const key = JSON.stringify([list.map((d) => d.hostname), config.primary, config.redirects]);
      if (key === shownKey) return;
      shownKey = key;
      domains = list;
      section.hidden = list.length === 0;
      const names = new Set(list.map((d) => d.hostname));
      if (!dirty) {
        draft = {
          primary: config.primary ?? SERVES,
          redirects: new Map(config.redirects.map((r) => [r.from, { to: r.to, status: r.status }])),
        };
      }
      // A domain removed meanwhile leaves the draft with it.
      if (!names.has(draft.primary)) draft.primary = SERVES;
      for (const [from, r] of draft.redirects) {
        if (!names.has(from) || (r.to !== defaultHost && !names.has(r.to))) draft.redirects.delete(from);
      }
      draw();
    },
  };
}

/**
 * The configuration API names each problem's line and column in the YAML it was sent; the form
 * sent no YAML the person wrote, so only the problems' words are shown.
 * @param {unknown} thrown
 */
function inPlace(thrown) {
  const error = /** @type {{ code?: string, message?: string }} */ (thrown);
  if (error?.code !== 'invalid_domain_config' || !error.message) return thrown;
  return {
    code: error.code,
    message: error.message.replace(/^line \d+, column \d+(?: \([^)]*\))?: /gm, ''),
  };
}
