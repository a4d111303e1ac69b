// @ts-check
import { announce, h, replaceChildren } from './dom.js';
import { domainCard } from './domain-card.js';
import { STATUS_LABELS } from './domain-words.js';
import { emptyState } from './widgets.js';

/** @typedef {import('./domains-api.js').Domain} Domain */
/** @typedef {import('./domains-api.js').DomainConfig} DomainConfig */
/** @typedef {import('./domain-card.js').Notice} Notice */
/** @typedef {import('./domain-card.js').CardOptions} CardOptions */

let cardIds = 0;

/**
 * The list of domain cards. Each poll redraws only the cards whose data changed (so focus, an
 * open menu and the reading position stay put), keeps the focused control focused across a
 * redraw, and announces status changes.
 * @param {object} options
 * @param {string} options.defaultHost the project's default address
 * @param {CardOptions['onCheck']} options.onCheck
 * @param {CardOptions['onRemove']} options.onRemove
 */
export function domainList({ defaultHost, onCheck, onRemove }) {
  const element = h(
    'div',
    { class: 'domain-list', id: 'domain-list', 'aria-busy': 'true' },
    h('p', { class: 'loading' }, 'Loading domains…'),
  );
  /** @type {Map<string, { element: HTMLElement, key: string, status: string, id: number }>} */
  const cards = new Map();

  /**
   * What a domain does for the project, from the saved configuration.
   * @param {Domain} domain
   * @param {Domain[]} domains
   * @param {DomainConfig | null} config
   */
  function roleOf(domain, domains, config) {
    const redirect = config?.redirects.find((r) => r.from === domain.hostname);
    const target = redirect && domains.find((d) => d.hostname === redirect.to);
    return {
      primary: config?.primary === domain.hostname,
      redirect: redirect ? { to: target?.unicode ?? redirect.to, status: redirect.status } : null,
      defaultHost,
    };
  }

  /**
   * @param {object} state
   * @param {Domain[]} state.domains
   * @param {DomainConfig | null} state.config
   * @param {Map<string, Notice>} state.notices
   * @param {Set<string>} state.busy
   */
  function render({ domains, config, notices, busy }) {
    element.removeAttribute('aria-busy');
    if (domains.length === 0) {
      for (const card of cards.values()) card.element.remove();
      cards.clear();
      replaceChildren(
        element,
        emptyState(
          'No custom domains yet',
          'Add one above. Until then the project is served at ',
          h('code', {}, defaultHost),
          '.',
        ),
      );
      return;
    }
    element.querySelector('.empty, .loading')?.remove();
    const seen = new Set();
    /** @type {HTMLElement | null} */
    let previous = null;
    for (const domain of domains) {
      seen.add(domain.hostname);
      const notice = notices.get(domain.hostname);
      const role = roleOf(domain, domains, config);
      const working = busy.has(domain.hostname);
      const key = JSON.stringify([domain, notice, working, role]);
      let card = cards.get(domain.hostname);
      if (!card || card.key !== key) {
        if (card && card.status !== domain.status)
          announce(`${domain.unicode}: ${STATUS_LABELS[domain.status]}`);
        const id = card?.id ?? ++cardIds;
        const fresh = domainCard({ domain, role, notice, busy: working, id, onCheck, onRemove });
        if (card) redraw(card.element, fresh);
        card = { element: fresh, key, status: domain.status, id };
        cards.set(domain.hostname, card);
      }
      if (card.element.previousElementSibling !== previous || card.element.parentNode !== element) {
        if (previous) previous.after(card.element);
        else element.prepend(card.element);
      }
      previous = card.element;
    }
    for (const [hostname, card] of cards) {
      if (!seen.has(hostname)) {
        card.element.remove();
        cards.delete(hostname);
        notices.delete(hostname);
      }
    }
  }

  /**
   * Replaces a card, keeping focus on the same control when it had it.
   * @param {HTMLElement} old
   * @param {HTMLElement} fresh
   */
  function redraw(old, fresh) {
    const active = /** @type {HTMLElement | null} */ (document.activeElement);
    const focusKey = active?.closest('.domain') === old ? active.dataset.focus : undefined;
    old.replaceWith(fresh);
    if (focusKey)
      /** @type {HTMLElement | null} */ (fresh.querySelector(`[data-focus="${focusKey}"]`))?.focus();
  }

  /**
   * An element of a domain's card, found again: the card may have been redrawn.
   * @param {string} hostname
   * @param {string} selector
   * @returns {HTMLElement | null}
   */
  const find = (hostname, selector) => cards.get(hostname)?.element.querySelector(selector) ?? null;

  return {
    element,
    render,
    /** @param {string} hostname */
    menuButtonOf: (hostname) => find(hostname, '[data-focus="menu"]'),
    /** @param {string} hostname */
    headingOf: (hostname) => find(hostname, 'h3'),
  };
}
