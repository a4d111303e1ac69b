import { api, domainPath, slugPath } from './api.js';
import { announce, copyText, errorBanner, formatDate, h, replaceChildren, time } from './dom.js';
import { loadProject, pageTitle, projectHeader } from './views.js';

/**
 * Project settings → Domains (seed 001): add a domain, the DNS record to create with copy buttons,
 * Verify, Re-verify, Remove behind a menu and a confirmation dialog, every failure with its remedy,
 * and the YAML configuration. The API's `status` is the word shown (the mapping lives on the
 * server, src/platform/domains/domain-status.ts); the page polls with back-off so changes show
 * without a reload.
 */

/** Badge text per API status; the same words as DOMAIN_STATUS_LABELS on the server. */
export const STATUS_LABELS = {
  unverified: 'Unverified',
  verified: 'Verified',
  issuing: 'Certificate being issued',
  live: 'Live',
  failed: 'Failed',
};

/** Polling: quick after a change or an action, slower while nothing moves, paused when hidden. */
export const POLL = { minMs: 1000, maxMs: 30_000, factor: 1.6 };

const FAILURE_TITLES = {
  certificate_failed: 'The certificate was not issued',
  caa_forbids: 'A CAA record blocks the certificate',
  hostname_taken: 'Another project serves this hostname',
  taken_over: 'Another project took this hostname',
  checks_stopped: 'Automatic checks stopped',
};

let cardIds = 0;

export async function renderDomains({ main }, slug) {
  const project = await loadProject(main, slug);
  if (!project) return;
  pageTitle('Domains', project.name);

  const page = {
    domains: null,
    yaml: null,
    cards: new Map(),
    notices: new Map(),
    busy: new Set(),
    delay: POLL.minMs,
    timer: null,
    stopped: false,
  };

  const listSlot = h(
    'div',
    { class: 'domain-list', id: 'domain-list', 'aria-busy': 'true' },
    h('p', { class: 'loading' }, 'Loading domains…'),
  );
  const pollSlot = h('div', { class: 'poll-status' });
  const yamlCode = h('code', {}, '');
  const yamlCopy = h(
    'button',
    {
      type: 'button',
      class: 'button button-small',
      onclick: () => copyText(yamlCopy, page.yaml ?? '', 'YAML configuration'),
    },
    'Copy YAML',
  );
  const dialog = removeDialog();

  // Add domain
  const input = h('input', {
    id: 'new-domain',
    name: 'hostname',
    type: 'text',
    inputmode: 'url',
    autocomplete: 'off',
    autocapitalize: 'off',
    spellcheck: 'false',
    required: true,
    maxlength: 300,
    placeholder: 'shop.example.com',
    'aria-describedby': 'new-domain-hint new-domain-error',
  });
  const fieldError = h('div', { id: 'new-domain-error', class: 'field-error' });
  const addButton = h('button', { type: 'submit', class: 'button button-primary' }, 'Add domain');
  const form = h(
    'form',
    { class: 'add-form', 'aria-labelledby': 'add-domain-title', onsubmit: addDomain },
    h('h2', { id: 'add-domain-title' }, 'Add domain'),
    h(
      'div',
      { class: 'field' },
      h('label', { for: 'new-domain' }, 'Hostname'),
      h('div', { class: 'input-row' }, input, addButton),
      h(
        'p',
        { id: 'new-domain-hint', class: 'hint' },
        'A subdomain such as shop.example.com, or an apex domain such as example.com.',
      ),
      fieldError,
    ),
  );

  const planNote =
    project.plan === 'free'
      ? h(
          'div',
          { class: 'banner banner-info' },
          h('p', { class: 'banner-title' }, 'Custom domains need the Pro plan'),
          h('p', {}, 'This project’s team is on the Free plan. Ask a platform admin to upgrade the team.'),
        )
      : null;

  replaceChildren(
    main,
    projectHeader(project, 'domains'),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'domains-title' },
      h('h2', { id: 'domains-title', class: 'section-title' }, 'Domains'),
      h(
        'p',
        { class: 'muted' },
        'Published by default at ',
        h('code', {}, project.defaultHost),
        '. Add a custom domain, create the DNS record shown, then verify: the SSL certificate is issued automatically.',
      ),
      planNote,
      form,
    ),
    pollSlot,
    listSlot,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'yaml-title' },
      h(
        'div',
        { class: 'section-head' },
        h('h2', { id: 'yaml-title' }, 'Domain configuration (YAML)'),
        yamlCopy,
      ),
      h(
        'p',
        { class: 'muted' },
        'What ',
        h('code', {}, `kennel domains export ${project.slug}`),
        ' prints and ',
        h('code', {}, 'kennel domains apply'),
        ' accepts.',
      ),
      h('pre', { class: 'yaml', tabindex: '0', 'aria-label': 'Domain configuration as YAML' }, yamlCode),
    ),
    dialog.element,
  );

  async function addDomain(event) {
    event.preventDefault();
    const hostname = input.value.trim();
    replaceChildren(fieldError);
    input.removeAttribute('aria-invalid');
    if (!hostname) {
      showFieldError({
        message: 'Enter a hostname, for example shop.example.com.',
        code: 'invalid_hostname',
      });
      return;
    }
    addButton.disabled = true;
    addButton.textContent = 'Adding…';
    try {
      const added = await api('POST', `${slugPath(slug)}/domains`, { hostname });
      input.value = '';
      const check = added.dns?.check;
      if (check && !check.ok && check.reason !== 'not_found_yet') {
        page.notices.set(added.domain.hostname, {
          kind: 'warning',
          title: 'DNS already shows a problem',
          message: check.message,
          remedy: check.remedy,
          reason: check.reason,
        });
      }
      for (const warning of added.warnings ?? []) {
        page.notices.set(added.domain.hostname, {
          kind: 'warning',
          title: 'Note',
          message: warning.message,
          reason: warning.code,
        });
      }
      await refresh(true);
      announce(`${added.domain.unicode} added. Create the DNS record shown, then click Verify.`);
      page.cards.get(added.domain.hostname)?.element.querySelector('h3')?.focus();
    } catch (error) {
      showFieldError(error);
    } finally {
      addButton.disabled = false;
      addButton.textContent = 'Add domain';
    }
  }

  function showFieldError(error) {
    input.setAttribute('aria-invalid', 'true');
    replaceChildren(
      fieldError,
      h(
        'p',
        { role: 'alert' },
        error.message,
        error.code ? h('span', { class: 'code-tag' }, error.code) : null,
      ),
    );
    input.focus();
  }

  async function act(domain, action) {
    page.busy.add(domain.hostname);
    page.notices.delete(domain.hostname);
    renderList();
    let said;
    try {
      const { outcome } = await api('POST', `${domainPath(slug, domain.hostname)}/${action}`);
      // A failed check shows on the card itself (its failure and remedy, or "Waiting for DNS").
      said = outcome.ok
        ? `${domain.unicode} verified. The certificate is being issued.`
        : `${domain.unicode} is not verified: ${outcome.message} ${outcome.remedy}`;
      if (outcome.ok && action === 'reverify') {
        page.notices.set(domain.hostname, {
          kind: 'success',
          title: 'Checked again: a fresh certificate attempt has started',
          message: outcome.message,
          transient: true,
        });
      }
    } catch (error) {
      said = `${domain.unicode}: ${error.message}`;
      page.notices.set(domain.hostname, {
        kind: 'error',
        title: 'That did not work',
        message: error.message,
        reason: error.code,
      });
    } finally {
      page.busy.delete(domain.hostname);
    }
    await refresh(true).catch(() => renderList());
    announce(said);
  }

  function renderList() {
    const domains = page.domains ?? [];
    listSlot.removeAttribute('aria-busy');
    if (domains.length === 0) {
      for (const card of page.cards.values()) card.element.remove();
      page.cards.clear();
      replaceChildren(
        listSlot,
        h(
          'div',
          { class: 'empty' },
          h('p', { class: 'empty-title' }, 'No custom domains yet'),
          h(
            'p',
            {},
            'Add one above. Until then the project is served at ',
            h('code', {}, project.defaultHost),
            '.',
          ),
        ),
      );
      return;
    }
    listSlot.querySelector('.empty, .loading')?.remove();
    const seen = new Set();
    let previous = null;
    for (const domain of domains) {
      seen.add(domain.hostname);
      const notice = page.notices.get(domain.hostname);
      const key = JSON.stringify([domain, notice, page.busy.has(domain.hostname)]);
      let card = page.cards.get(domain.hostname);
      if (!card || card.key !== key) {
        if (card && card.status !== domain.status)
          announce(`${domain.unicode}: ${STATUS_LABELS[domain.status]}`);
        const element = domainCard(domain, notice, card?.id ?? ++cardIds);
        if (card) {
          const focusKey =
            document.activeElement?.closest?.('.domain') === card.element
              ? document.activeElement.dataset.focus
              : undefined;
          card.element.replaceWith(element);
          if (focusKey) element.querySelector(`[data-focus="${focusKey}"]`)?.focus();
        }
        card = { element, key, status: domain.status, id: card?.id ?? cardIds };
        page.cards.set(domain.hostname, card);
      }
      if (card.element.previousElementSibling !== previous || card.element.parentNode !== listSlot) {
        if (previous) previous.after(card.element);
        else listSlot.prepend(card.element);
      }
      previous = card.element;
    }
    for (const [hostname, card] of page.cards) {
      if (!seen.has(hostname)) {
        card.element.remove();
        page.cards.delete(hostname);
        page.notices.delete(hostname);
      }
    }
  }

  function domainCard(domain, notice, id) {
    const busy = page.busy.has(domain.hostname);
    const titleId = `domain-${id}-title`;
    const menu = actionsMenu(domain, id);
    const actions = [];
    if (domain.state === 'unverified' || domain.state === 'misconfigured') {
      actions.push(
        h(
          'button',
          {
            type: 'button',
            class: 'button button-primary',
            dataset: { focus: 'verify' },
            disabled: busy,
            onclick: () => act(domain, 'verify'),
          },
          busy ? 'Verifying…' : 'Verify',
        ),
      );
    }
    if (domain.reverifyAvailable) {
      actions.push(
        h(
          'button',
          {
            type: 'button',
            class: 'button',
            dataset: { focus: 'reverify' },
            disabled: busy,
            onclick: () => act(domain, 'reverify'),
          },
          busy ? 'Checking…' : 'Re-verify',
        ),
      );
    }
    return h(
      'article',
      {
        class: `card domain status-${domain.status}`,
        'aria-labelledby': titleId,
        dataset: { hostname: domain.hostname, status: domain.status },
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
              STATUS_LABELS[domain.status] ?? domain.status,
            ),
          ),
          domain.unicode !== domain.hostname
            ? h('p', { class: 'muted small' }, h('code', {}, domain.hostname))
            : null,
        ),
        menu,
      ),
      statusLine(domain),
      domain.failure ? failureBox(domain.failure, domain) : waitingNote(domain),
      notice ? noticeBox(notice) : null,
      recordsTable(domain, id),
      actions.length ? h('div', { class: 'actions' }, actions) : null,
      h(
        'dl',
        { class: 'domain-meta' },
        h('div', {}, h('dt', {}, 'Added'), h('dd', {}, time(domain.createdAt))),
        h(
          'div',
          {},
          h('dt', {}, 'Last checked'),
          h('dd', {}, domain.lastCheckedAt ? time(domain.lastCheckedAt) : 'Not yet'),
        ),
        domain.certificate?.notAfter
          ? h(
              'div',
              {},
              h('dt', {}, 'Certificate valid until'),
              h('dd', {}, time(domain.certificate.notAfter)),
            )
          : null,
      ),
    );
  }

  function statusLine(domain) {
    const text = {
      unverified:
        'Create the DNS record below at your DNS provider, then click Verify. DNS is also checked automatically.',
      verified: 'DNS verified. The SSL certificate is ordered in a moment.',
      issuing: 'DNS verified. The SSL certificate is being issued; this usually takes a couple of minutes.',
      live: 'Live: served over HTTPS with its own certificate, renewed automatically.',
      failed:
        domain.state === 'misconfigured'
          ? 'Still served, but DNS no longer points here: the certificate would fail to renew.'
          : 'This domain needs your attention.',
    }[domain.status];
    const reverifyHint =
      domain.status === 'issuing' && !domain.reverifyAvailable && domain.reverifyAvailableAt
        ? h(
            'span',
            {},
            ' If no certificate has come by ',
            time(domain.reverifyAvailableAt),
            ', Re-verify will be offered here.',
          )
        : domain.reverifyAvailable
          ? h('span', {}, ' No certificate has come yet: confirm the record below and click Re-verify.')
          : null;
    return h('p', { class: 'status-line' }, text, reverifyHint);
  }

  function failureBox(failure, domain) {
    const title =
      FAILURE_TITLES[failure.reason] ??
      (domain.state === 'misconfigured' ? 'DNS no longer points here' : 'Verification failed');
    return h(
      'div',
      { class: 'banner banner-error', dataset: { testid: 'failure' } },
      h('p', { class: 'banner-title' }, title, h('span', { class: 'code-tag' }, failure.reason)),
      failure.message ? h('p', {}, failure.message) : null,
      h('p', { class: 'remedy' }, h('strong', {}, 'What to do: '), failure.remedy),
    );
  }

  function waitingNote(domain) {
    if (domain.status !== 'unverified' || !domain.lastCheckedAt || !domain.message) return null;
    return h(
      'div',
      { class: 'banner banner-info' },
      h(
        'p',
        { class: 'banner-title' },
        'Waiting for DNS',
        domain.reason ? h('span', { class: 'code-tag' }, domain.reason) : null,
      ),
      h('p', {}, domain.message),
      domain.remedy ? h('p', { class: 'remedy' }, h('strong', {}, 'What to do: '), domain.remedy) : null,
    );
  }

  function noticeBox(notice) {
    const kinds = {
      success: 'banner-success',
      pending: 'banner-info',
      warning: 'banner-warning',
      error: 'banner-error',
    };
    return h(
      'div',
      { class: `banner ${kinds[notice.kind]}`, dataset: { testid: 'notice' } },
      h(
        'p',
        { class: 'banner-title' },
        notice.title,
        notice.reason ? h('span', { class: 'code-tag' }, notice.reason) : null,
      ),
      notice.message ? h('p', {}, notice.message) : null,
      notice.remedy ? h('p', { class: 'remedy' }, h('strong', {}, 'What to do: '), notice.remedy) : null,
    );
  }

  function recordsTable(domain, id) {
    const fields = [
      ['type', 'Type'],
      ['name', 'Name'],
      ['value', 'Value'],
      ['ttl', 'TTL'],
    ];
    const many = domain.records.length > 1;
    return h(
      'div',
      { class: 'records' },
      h('h4', { id: `domain-${id}-records` }, many ? 'DNS records to create' : 'DNS record to create'),
      h(
        'table',
        { class: 'table record-table', 'aria-labelledby': `domain-${id}-records` },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            fields.map(([, label]) => h('th', { scope: 'col' }, label)),
            many ? h('th', { scope: 'col' }, 'Use') : null,
          ),
        ),
        h(
          'tbody',
          {},
          domain.records.map((record, index) =>
            h(
              'tr',
              { dataset: { role: record.role } },
              fields.map(([field, label]) => {
                const value = String(record[field]);
                const button = h(
                  'button',
                  {
                    type: 'button',
                    class: 'copy',
                    'aria-label': `Copy ${label} ${value}`,
                    dataset: { focus: `copy-${index}-${field}` },
                    onclick: () => copyText(button, value, `${label} ${value}`),
                  },
                  'Copy',
                );
                return h(
                  'td',
                  { 'data-label': label },
                  h('span', { class: 'cell' }, h('code', { dataset: { field } }, value), button),
                );
              }),
              many
                ? h(
                    'td',
                    { 'data-label': 'Use' },
                    { required: 'Required', alternative: 'Alternative', ownership: 'Ownership' }[record.role],
                    record.note ? h('span', { class: 'muted small block' }, record.note) : null,
                  )
                : null,
            ),
          ),
        ),
      ),
    );
  }

  function actionsMenu(domain, id) {
    const menuId = `domain-${id}-menu`;
    const trigger = h(
      'button',
      {
        type: 'button',
        class: 'button button-icon',
        'aria-haspopup': 'menu',
        'aria-expanded': 'false',
        'aria-controls': menuId,
        'aria-label': `More actions for ${domain.unicode}`,
        dataset: { focus: 'menu' },
      },
      h('span', { 'aria-hidden': 'true' }, '⋯'),
    );
    const remove = h(
      'button',
      { type: 'button', role: 'menuitem', class: 'menu-item danger', tabindex: '-1' },
      'Remove domain…',
    );
    const list = h(
      'ul',
      {
        id: menuId,
        role: 'menu',
        class: 'menu',
        hidden: true,
        'aria-label': `Actions for ${domain.unicode}`,
      },
      h('li', { role: 'none' }, remove),
    );
    const wrapper = h('div', { class: 'menu-wrap' }, trigger, list);
    const items = () => [...list.querySelectorAll('[role="menuitem"]')];
    const close = (focusTrigger) => {
      list.hidden = true;
      trigger.setAttribute('aria-expanded', 'false');
      document.removeEventListener('pointerdown', outside, true);
      if (focusTrigger) trigger.focus();
    };
    const open = (focusLast) => {
      list.hidden = false;
      trigger.setAttribute('aria-expanded', 'true');
      const all = items();
      (focusLast ? all[all.length - 1] : all[0])?.focus();
      document.addEventListener('pointerdown', outside, true);
    };
    function outside(event) {
      if (!wrapper.contains(event.target)) close(false);
    }
    trigger.addEventListener('click', () => (list.hidden ? open(false) : close(true)));
    trigger.addEventListener('keydown', (event) => {
      if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
        event.preventDefault();
        open(event.key === 'ArrowUp');
      }
    });
    list.addEventListener('keydown', (event) => {
      const all = items();
      const at = all.indexOf(document.activeElement);
      if (event.key === 'Escape') {
        event.preventDefault();
        close(true);
      } else if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
        event.preventDefault();
        all[(at + (event.key === 'ArrowDown' ? 1 : all.length - 1)) % all.length]?.focus();
      } else if (event.key === 'Home' || event.key === 'End') {
        event.preventDefault();
        (event.key === 'Home' ? all[0] : all[all.length - 1])?.focus();
      } else if (event.key === 'Tab') {
        close(false);
      }
    });
    remove.addEventListener('click', () => {
      close(false);
      dialog.open(domain, trigger);
    });
    return wrapper;
  }

  function removeDialog() {
    const title = h('h2', { id: 'remove-title' }, 'Remove domain?');
    const body = h('p', { id: 'remove-body' });
    const errorSlot = h('div', {});
    const cancel = h('button', { type: 'button', class: 'button', autofocus: true }, 'Cancel');
    const confirm = h('button', { type: 'button', class: 'button button-danger' }, 'Remove domain');
    const element = h(
      'dialog',
      { class: 'dialog', 'aria-labelledby': 'remove-title', 'aria-describedby': 'remove-body' },
      title,
      body,
      errorSlot,
      h('div', { class: 'dialog-actions' }, cancel, confirm),
    );
    let current = null;
    let returnFocus = null;
    cancel.addEventListener('click', () => element.close());
    element.addEventListener('close', () => {
      const removed = element.returnValue === 'removed';
      element.returnValue = '';
      if (removed) {
        input.focus();
      } else {
        // The card may have been redrawn while the dialog was open: find its menu button again.
        const card = current && page.cards.get(current.hostname);
        (card?.element.querySelector('[data-focus="menu"]') ?? returnFocus)?.focus();
      }
      current = null;
    });
    confirm.addEventListener('click', async () => {
      if (!current) return;
      confirm.disabled = true;
      confirm.textContent = 'Removing…';
      try {
        await api('DELETE', domainPath(slug, current.hostname));
        announce(`${current.unicode} removed. Serving traffic stopped.`);
        element.close('removed');
        await refresh(true);
      } catch (error) {
        replaceChildren(errorSlot, errorBanner(error, 'The domain was not removed'));
      } finally {
        confirm.disabled = false;
        confirm.textContent = 'Remove domain';
      }
    });
    return {
      element,
      open(domain, trigger) {
        current = domain;
        returnFocus = trigger;
        replaceChildren(title, 'Remove ', domain.unicode, '?');
        replaceChildren(
          body,
          'Serving traffic for ',
          h('strong', {}, domain.unicode),
          ' stops immediately, and redirects from or to it are removed too. You can add it again later.',
        );
        replaceChildren(errorSlot);
        element.showModal();
        cancel.focus();
      },
    };
  }

  /** Loads the domains and the YAML; redraws what changed. True when something changed. */
  async function refresh(force = false) {
    const domains = await api('GET', `${slugPath(slug)}/domains`);
    const before = JSON.stringify(page.domains);
    const changed = before !== JSON.stringify(domains);
    page.domains = domains;
    if (changed || force || page.yaml === null) {
      const config = await api('GET', `${slugPath(slug)}/domain-config`);
      page.yaml = config.yaml;
      yamlCode.textContent = config.yaml;
    }
    // A transient notice (the outcome of a click) gives way once the status itself changes.
    if (changed && before !== 'null') {
      for (const [hostname, notice] of page.notices) {
        if (notice.transient && !force) page.notices.delete(hostname);
      }
    }
    renderList();
    if (force) restartPolling();
    return changed;
  }

  function schedule() {
    if (page.stopped) return;
    clearTimeout(page.timer);
    page.timer = setTimeout(poll, page.delay);
  }

  function restartPolling() {
    page.delay = POLL.minMs;
    schedule();
  }

  async function poll() {
    if (page.stopped) return;
    if (document.hidden) return; // visibilitychange resumes
    try {
      const changed = await refresh();
      replaceChildren(pollSlot);
      page.delay = changed ? POLL.minMs : Math.min(POLL.maxMs, Math.round(page.delay * POLL.factor));
    } catch (error) {
      page.delay = Math.min(POLL.maxMs, Math.round(page.delay * POLL.factor));
      replaceChildren(
        pollSlot,
        h(
          'div',
          { class: 'banner banner-warning' },
          h('p', { class: 'banner-title' }, 'Live updates paused'),
          h('p', {}, `${error.message} Retrying in ${Math.round(page.delay / 1000)} s.`),
        ),
      );
    }
    schedule();
  }

  const onVisible = () => {
    if (!document.hidden) restartPolling();
  };
  document.addEventListener('visibilitychange', onVisible);

  try {
    await refresh();
  } catch (error) {
    replaceChildren(listSlot, errorBanner(error, 'The domains could not be loaded'));
  }
  schedule();

  return () => {
    page.stopped = true;
    clearTimeout(page.timer);
    document.removeEventListener('visibilitychange', onVisible);
    if (dialog.element.open) dialog.element.close();
  };
}

export { formatDate };
