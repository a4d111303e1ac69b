// @ts-check
import { announce, copyText, errorBanner, h, replaceChildren } from './dom.js';
import { addDomainForm } from './domain-add-form.js';
import { domainList } from './domain-list.js';
import { startPolling } from './domain-poller.js';
import { domainSettingsForm } from './domain-settings-form.js';
import { lowerFirst, reasonLabel, STATUS_LABELS } from './domain-words.js';
import { domainsApi } from './domains-api.js';
import { loadProject, pageTitle, projectHeader } from './views.js';
import { confirmAction, muted, sectionHeading, titledSection } from './widgets.js';

/**
 * Project settings → Domains (seed 001): add a domain, the DNS records with copy buttons, Verify,
 * Re-verify (with the time it is offered), Remove behind a menu and a confirmation dialog, every
 * failure with its remedy, the primary domain and redirects as a form, and the YAML
 * configuration as an export. The API's `status` is the word shown (the mapping lives on the
 * server, src/platform/domains/domain-status.ts); the page polls with back-off so changes show
 * without a reload. This module holds the page's state and wires the parts: domain-add-form.js,
 * domain-list.js (cards from domain-card.js, domain-records.js, domain-menu.js),
 * domain-settings-form.js, domain-poller.js, domain-words.js, domains-api.js.
 */

export { POLL } from './domain-poller.js';
export { STATUS_LABELS };

/** @typedef {import('./domains-api.js').Domain} Domain */
/** @typedef {import('./domains-api.js').DomainConfig} DomainConfig */
/** @typedef {import('./domains-api.js').Me} Me */
/** @typedef {import('./domain-card.js').Notice} Notice */

/**
 * @param {{ main: HTMLElement, me: Me | null, navigate: (path: string, options?: { replace?: boolean }) => void }} context
 * @param {string} slug
 */
export async function renderDomains({ main, me, navigate }, slug) {
  /** @type {import('./domains-api.js').Project | null} */
  const project = await loadProject(main, slug);
  if (!project) return;
  pageTitle('Domains', project.name);
  const domainsOf = domainsApi(slug);

  const page = {
    /** @type {Domain[] | null} */
    domains: null,
    /** @type {DomainConfig | null} */
    config: null,
    /** @type {Map<string, Notice>} */
    notices: new Map(),
    /** @type {Set<string>} */
    busy: new Set(),
  };

  const list = domainList({
    defaultHost: project.defaultHost,
    onCheck: check,
    onRemove: remove,
  });
  const pollSlot = h('div', { class: 'poll-status' });
  const yamlCode = h('code', {}, '');
  const yamlCopy = h(
    'button',
    {
      type: 'button',
      class: 'button button-small',
      onclick: () => copyText(yamlCopy, page.config?.yaml ?? '', 'YAML configuration'),
    },
    'Copy YAML',
  );
  const adding = addDomainForm({
    project,
    me,
    add: domainsOf.add,
    added,
    upgraded: () => navigate(location.pathname, { replace: true }),
  });
  const settings = domainSettingsForm({
    defaultHost: project.defaultHost,
    async save(config) {
      await domainsOf.applyConfig(config);
      await refresh(true);
    },
  });
  /** Closes the Remove dialog when the page is left. */
  const leaving = new AbortController();

  replaceChildren(
    main,
    projectHeader(project, 'domains'),
    titledSection(
      'card',
      'domains',
      null,
      sectionHeading('domains', 'Domains', 'section-title'),
      muted(
        'Published by default at ',
        h('code', {}, project.defaultHost),
        '. Add a custom domain, create the DNS records shown, then verify: the SSL certificate is issued automatically.',
      ),
      adding.form,
    ),
    pollSlot,
    list.element,
    settings.section,
    titledSection(
      'card',
      'yaml',
      null,
      h('div', { class: 'section-head' }, sectionHeading('yaml', 'Domain configuration (YAML)'), yamlCopy),
      muted(
        'The settings above as a file, to keep with your code: ',
        h('code', {}, `kennel domains export ${project.slug}`),
        ' prints it and ',
        h('code', {}, `kennel domains apply ${project.slug} domains.yaml`),
        ' applies it.',
      ),
      // A region: it scrolls, so it takes focus, and a label is allowed only on an element with a role.
      h(
        'pre',
        { class: 'yaml', tabindex: '0', role: 'region', 'aria-label': 'Domain configuration as YAML' },
        yamlCode,
      ),
    ),
  );

  /**
   * Asks, then removes the domain. Cancelled, focus goes back to its menu button (found again: the
   * card may have been redrawn meanwhile); removed, to the add form.
   * @param {Domain} domain
   * @param {HTMLElement} trigger
   */
  async function remove(domain, trigger) {
    const removed = await confirmAction({
      title: `Remove ${domain.unicode}?`,
      body: [
        'Serving traffic for ',
        h('strong', {}, domain.unicode),
        ' stops immediately, and redirects from or to it are removed too. You can add it again later.',
      ],
      confirm: 'Remove domain',
      busy: 'Removing…',
      failure: 'The domain was not removed',
      action: () => domainsOf.remove(domain.hostname),
      focusAfter: (done) => (done ? adding.input : (list.menuButtonOf(domain.hostname) ?? trigger)),
      signal: leaving.signal,
    });
    if (!removed) return;
    announce(`${domain.unicode} removed. Serving traffic stopped.`);
    refresh(true).catch(() => renderList());
  }

  /** @param {import('./domains-api.js').AddedDomain} result */
  async function added(result) {
    const { domain } = result;
    const check = result.dns?.check;
    if (check && !check.ok && check.reason !== 'not_found_yet') {
      page.notices.set(domain.hostname, {
        kind: 'warning',
        title: `DNS already shows a problem: ${lowerFirst(reasonLabel(check.reason))}`,
        message: check.message,
        remedy: check.remedy,
        reason: check.reason,
      });
    }
    for (const warning of result.warnings ?? []) {
      page.notices.set(domain.hostname, {
        kind: 'warning',
        title: `Note: ${lowerFirst(reasonLabel(warning.code))}`,
        message: warning.message,
        reason: warning.code,
      });
    }
    await refresh(true);
    const records = domain.records.length === 1 ? 'the DNS record shown' : 'the DNS records shown';
    announce(`${domain.unicode} added. Create ${records}, then click Verify.`);
    list.headingOf(domain.hostname)?.focus();
  }

  /**
   * @param {Domain} domain
   * @param {'verify' | 'reverify'} action
   */
  async function check(domain, action) {
    page.busy.add(domain.hostname);
    page.notices.delete(domain.hostname);
    renderList();
    let said;
    try {
      const { outcome } = await domainsOf.check(domain.hostname, action);
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
    } catch (thrown) {
      const error = /** @type {{ code?: string, message?: string }} */ (thrown);
      said = `${domain.unicode}: ${error.message}`;
      page.notices.set(domain.hostname, {
        kind: 'error',
        title: 'That did not work',
        message: error.code === 'domain_not_found' ? 'This domain was removed meanwhile.' : error.message,
        reason: error.code,
      });
    } finally {
      page.busy.delete(domain.hostname);
    }
    await refresh(true).catch(() => renderList());
    announce(said);
  }

  function renderList() {
    list.render({ domains: page.domains ?? [], config: page.config, notices: page.notices, busy: page.busy });
  }

  /** Which refresh started last: an older one's answers, arriving after it, are stale. */
  let latestRefresh = 0;

  /** Loads the domains and the configuration; redraws what changed. True when something changed. */
  async function refresh(force = false) {
    const turn = ++latestRefresh;
    const domains = await domainsOf.list();
    // A poll that began before a removal must not draw its list, or its YAML, after the removal's.
    if (turn !== latestRefresh) return false;
    const before = JSON.stringify(page.domains);
    const changed = before !== JSON.stringify(domains);
    if (changed || force || page.config === null) {
      const config = await domainsOf.config();
      if (turn !== latestRefresh) return false;
      page.config = config;
      yamlCode.textContent = config.yaml;
    }
    page.domains = domains;
    // A transient notice (the outcome of a click) gives way once the status itself changes.
    if (changed && before !== 'null') {
      for (const [hostname, notice] of page.notices) {
        if (notice.transient && !force) page.notices.delete(hostname);
      }
    }
    renderList();
    settings.update(domains, page.config);
    if (force) polling?.restart();
    return changed;
  }

  /** @type {ReturnType<typeof startPolling> | undefined} */
  let polling;
  try {
    await refresh();
  } catch (error) {
    replaceChildren(list.element, errorBanner(error, 'The domains could not be loaded'));
  }
  polling = startPolling({
    refresh: () => refresh(),
    recovered: () => replaceChildren(pollSlot),
    failed(thrown, retryInMs) {
      const error = /** @type {{ message?: string }} */ (thrown);
      replaceChildren(
        pollSlot,
        h(
          'div',
          { class: 'banner banner-warning' },
          h('p', { class: 'banner-title' }, 'Live updates paused'),
          h('p', {}, `${error?.message ?? String(thrown)} Retrying in ${Math.round(retryInMs / 1000)} s.`),
        ),
      );
    },
  });

  return () => {
    polling?.stop();
    leaving.abort();
  };
}
