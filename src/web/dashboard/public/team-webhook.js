// @ts-check
import { api } from './api.js';
import { announce, copyText, errorBanner, h, replaceChildren, time } from './dom.js';
import { deliveriesTable } from './webhook-deliveries.js';
import { cardSection, confirmAction, formField, loadInto, muted } from './widgets.js';

/**
 * A team's webhook, for its owners and platform admins: the endpoint URL, the signing secret shown
 * once, rotation, a test event, the delivery log (read again while a message is on its way) and
 * redelivery. The API decides who may do what (src/platform/api/routes/webhooks.ts).
 */

/** @typedef {import('./api.js').ApiError} ApiError */
/** @typedef {import('./types.js').WebhookEndpoint} WebhookEndpoint */
/** @typedef {import('./types.js').WebhookEndpointSet} WebhookEndpointSet */
/** @typedef {import('./types.js').WebhookDelivery} WebhookDelivery */

/** While a message is being attempted, the log is read again this often (backing off while nothing moves). */
const POLL = { minMs: 1000, maxMs: 15_000, factor: 1.6 };

/**
 * What a team member who is not an owner sees: whom to ask.
 * @param {string} ownerNames
 */
export function webhookForMembers(ownerNames) {
  return cardSection(
    'webhook',
    'Webhook',
    h(
      'p',
      { class: 'muted', 'data-testid': 'webhook-owners-only' },
      `The team’s owners manage its webhook, which sends domain and certificate events to their systems. Ask ${ownerNames} if you need a change.`,
    ),
  );
}

/**
 * The owners' webhook section; `stop` ends its polling when the page is left.
 * @param {number} teamId
 */
export function webhookSection(teamId) {
  const base = `/api/v1/teams/${teamId}`;
  const page = {
    stopped: false,
    /** @type {ReturnType<typeof setTimeout> | undefined} */ timer: undefined,
    delay: POLL.minMs,
  };
  // Polling pauses while the tab is hidden and picks up again when it is shown.
  const onVisible = () => {
    if (!document.hidden) void refreshDeliveries(true);
  };
  document.addEventListener('visibilitychange', onVisible);
  /** @type {WebhookEndpoint | null} */
  let endpoint = null;
  const secretSlot = h('div', { class: 'slot' });
  const endpointSlot = h('div', { class: 'webhook-endpoint' });
  const noticeSlot = h('div', { class: 'slot' });
  const deliveriesSlot = h('div', {}, h('p', { class: 'loading' }, 'Loading deliveries…'));
  const save = h('button', { type: 'submit', class: 'button button-primary' }, 'Save endpoint');
  const url = formField({
    id: 'webhook-url',
    label: 'Endpoint URL',
    control: h('input', {
      name: 'url',
      type: 'url',
      inputmode: 'url',
      maxlength: 2000,
      autocomplete: 'off',
      spellcheck: 'false',
      placeholder: 'https://hooks.example.com/kennel',
    }),
    extra: save,
    hint: 'Where Kennel POSTs events, signed per Standard Webhooks: an HTTPS address.',
  });
  const form = h('form', { class: 'stack-form', novalidate: true, onsubmit: saveUrl }, url.element);
  const testButton = h('button', { type: 'button', class: 'button', onclick: sendTest }, 'Send test event');
  const rotateButton = h('button', { type: 'button', class: 'button', onclick: rotate }, 'Rotate secret…');
  const removeButton = h(
    'button',
    { type: 'button', class: 'button danger', onclick: remove },
    'Remove endpoint…',
  );
  const refreshButton = h(
    'button',
    { type: 'button', class: 'button button-small', onclick: () => void refreshDeliveries(true) },
    'Refresh',
  );
  const deliveriesSection = h(
    'div',
    { class: 'section' },
    h('div', { class: 'section-head' }, h('h3', { id: 'deliveries-title' }, 'Deliveries'), refreshButton),
    deliveriesSlot,
  );

  const section = cardSection(
    'webhook',
    'Webhook',
    muted(
      'Kennel POSTs the domain and certificate events of every project of this team to one URL, retrying for a day when it fails. Only team owners see this.',
    ),
    secretSlot,
    noticeSlot,
    endpointSlot,
    form,
    deliveriesSection,
  );
  void load();
  return {
    element: section,
    stop() {
      page.stopped = true;
      clearTimeout(page.timer);
      document.removeEventListener('visibilitychange', onVisible);
    },
  };

  async function load() {
    try {
      // A list (none or one): a team without a webhook is no failed request.
      /** @type {WebhookEndpoint[]} */
      const endpoints = await api('GET', `${base}/webhook-endpoints`);
      endpoint = endpoints[0] ?? null;
    } catch (error) {
      replaceChildren(noticeSlot, errorBanner(error, 'The webhook could not be loaded'));
      return;
    }
    showEndpoint();
    await refreshDeliveries(true);
  }

  function showEndpoint() {
    url.control.value = endpoint?.url ?? '';
    save.textContent = endpoint ? 'Change URL' : 'Save endpoint';
    deliveriesSection.hidden = !endpoint;
    if (!endpoint) {
      replaceChildren(
        endpointSlot,
        muted('No endpoint yet: set one to start receiving events. Its signing secret is shown once.'),
      );
      return;
    }
    replaceChildren(
      endpointSlot,
      h(
        'dl',
        { class: 'facts' },
        h(
          'div',
          { class: 'fact' },
          h('dt', {}, 'Sends to'),
          h('dd', {}, h('code', { class: 'break', 'data-testid': 'webhook-url' }, endpoint.url)),
        ),
        h(
          'div',
          { class: 'fact' },
          h('dt', {}, 'Signing secret'),
          h('dd', {}, 'ends in ', h('code', { 'data-testid': 'secret-hint' }, endpoint.secretHint)),
        ),
        h('div', { class: 'fact' }, h('dt', {}, 'Last changed'), h('dd', {}, time(endpoint.updatedAt))),
      ),
      h('div', { class: 'actions' }, testButton, rotateButton, removeButton),
    );
  }

  /**
   * The secret, this once, with a copy button.
   * @param {string} secret
   * @param {string} title
   */
  function showSecret(secret, title) {
    const copy = h(
      'button',
      { type: 'button', class: 'copy', onclick: () => copyText(copy, secret, 'Signing secret') },
      'Copy',
    );
    const titleEl = h('h3', { tabindex: '-1' }, title);
    replaceChildren(
      secretSlot,
      h(
        'div',
        { class: 'banner banner-success secret-box', 'data-testid': 'secret' },
        titleEl,
        h(
          'p',
          {},
          'Store it with your receiver now (for example as KENNEL_WEBHOOK_SECRET): Kennel shows it only this once, and later just its last four characters.',
        ),
        h('div', { class: 'cell secret-value' }, h('code', { 'data-testid': 'secret-value' }, secret), copy),
        h(
          'div',
          {},
          h(
            'button',
            { type: 'button', class: 'button button-small', onclick: () => replaceChildren(secretSlot) },
            'I have stored it',
          ),
        ),
      ),
    );
    titleEl.focus();
  }

  /** @param {SubmitEvent} event */
  async function saveUrl(event) {
    event.preventDefault();
    url.clear();
    replaceChildren(noticeSlot);
    const value = url.control.value.trim();
    if (!value) {
      url.showError({ message: 'Enter the HTTPS address your receiver listens on.' });
      url.control.focus();
      return;
    }
    save.disabled = true;
    try {
      /** @type {WebhookEndpointSet} */
      const set = await api('PUT', `${base}/webhook`, { url: value });
      const created = endpoint === null;
      endpoint = set.endpoint;
      showEndpoint();
      if (set.secret) showSecret(set.secret, 'Endpoint saved: here is its signing secret');
      announce(
        created
          ? 'Webhook endpoint saved. Copy its signing secret now.'
          : 'Webhook URL changed; the secret stays the same.',
      );
      if (!set.secret) replaceChildren(noticeSlot, notice('URL changed. The signing secret stays the same.'));
      await refreshDeliveries(true);
    } catch (error) {
      url.showError(/** @type {ApiError} */ (error));
      url.control.focus();
    } finally {
      save.disabled = false;
    }
  }

  async function sendTest() {
    replaceChildren(noticeSlot);
    testButton.disabled = true;
    try {
      /** @type {WebhookDelivery} */
      const sent = await api('POST', `${base}/webhook/test`);
      replaceChildren(noticeSlot, notice(`Test event ${sent.id} queued: follow it in the deliveries below.`));
      announce('Test event queued.');
      await refreshDeliveries(true);
    } catch (error) {
      replaceChildren(noticeSlot, errorBanner(error, 'The test event was not sent'));
    } finally {
      testButton.disabled = false;
    }
  }

  async function rotate() {
    replaceChildren(noticeSlot);
    await confirmAction({
      title: 'Rotate the signing secret?',
      body: 'A new secret is made and shown once. The current one stops signing at once: your receiver rejects new deliveries until it has the new secret.',
      confirm: 'Rotate secret',
      busy: 'Rotating…',
      action: async () => {
        /** @type {WebhookEndpointSet} */
        const rotated = await api('POST', `${base}/webhook/secret`);
        endpoint = rotated.endpoint;
        showEndpoint();
        if (rotated.secret) showSecret(rotated.secret, 'Secret rotated: here is the new one');
        announce('Signing secret rotated. Copy the new secret now.');
      },
    });
  }

  async function remove() {
    replaceChildren(noticeSlot);
    const removed = await confirmAction({
      title: 'Remove the webhook endpoint?',
      body: 'Events stop at once, and messages not yet delivered fail. You can set an endpoint again later; it gets a new secret.',
      confirm: 'Remove endpoint',
      busy: 'Removing…',
      action: async () => {
        await api('DELETE', `${base}/webhook`);
        endpoint = null;
        replaceChildren(secretSlot);
        showEndpoint();
        replaceChildren(noticeSlot, notice('Endpoint removed: no more events are sent.'));
        announce('Webhook endpoint removed.');
      },
    });
    if (removed) url.control.focus();
  }

  /** @param {WebhookDelivery} delivery @param {HTMLButtonElement} button */
  async function redeliver(delivery, button) {
    button.disabled = true;
    try {
      await api('POST', `${base}/webhook/deliveries/${encodeURIComponent(delivery.id)}/redeliver`);
      announce(`${delivery.type} ${delivery.id} is being sent again.`);
      await refreshDeliveries(true);
    } catch (error) {
      replaceChildren(noticeSlot, errorBanner(error, 'The message was not sent again'));
      button.disabled = false;
    }
  }

  /** Reads the log; while a message is on its way, reads it again (backing off). */
  async function refreshDeliveries(restart = false) {
    clearTimeout(page.timer);
    if (page.stopped || !endpoint) return;
    if (restart) page.delay = POLL.minMs;
    /** @type {WebhookDelivery[] | null} */
    const deliveries = await loadInto(
      deliveriesSlot,
      `${base}/webhook/deliveries?limit=50`,
      'The deliveries could not be loaded',
    );
    if (!deliveries || page.stopped) return;
    const before = deliveriesSlot.dataset.snapshot;
    const snapshot = JSON.stringify(deliveries.map((d) => [d.id, d.state, d.attempts]));
    if (before !== snapshot) {
      deliveriesSlot.dataset.snapshot = snapshot;
      replaceChildren(deliveriesSlot, deliveriesTable(deliveries, redeliver));
      page.delay = POLL.minMs;
    } else {
      page.delay = Math.min(POLL.maxMs, Math.round(page.delay * POLL.factor));
    }
    if (deliveries.some((d) => d.state === 'pending') && !document.hidden) {
      page.timer = setTimeout(() => void refreshDeliveries(), page.delay);
    }
  }
}

/** @param {string} text */
function notice(text) {
  return h('div', { class: 'banner banner-info', role: 'status' }, h('p', {}, text));
}
