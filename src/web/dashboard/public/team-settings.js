// @ts-check
import { ApiError, api } from './api.js';
import { announce, copyText, errorBanner, h, replaceChildren, time } from './dom.js';
import { notFound, pageTitle, teamHeader } from './views.js';
import { cardSection, cell, confirmAction, dataTable, emptyState, formField, loadInto } from './widgets.js';

/**
 * A team's settings: its plan (everyone in the team sees it; platform admins change it) and its
 * webhook (team owners and platform admins: the endpoint URL, the signing secret shown once,
 * rotation, a test event, the delivery log and redelivery). The API decides who may do what
 * (src/platform/api/routes/teams.ts, webhooks.ts); the page only leaves out what would be refused.
 */

/** @typedef {import('./types.js').ViewContext} ViewContext */
/** @typedef {import('./types.js').Team} Team */
/** @typedef {import('./types.js').Member} TeamMember */
/** @typedef {import('./types.js').PlanName} PlanName */
/** @typedef {import('./types.js').WebhookEndpoint} WebhookEndpoint */
/** @typedef {import('./types.js').WebhookEndpointSet} WebhookEndpointSet */
/** @typedef {import('./types.js').WebhookDelivery} WebhookDelivery */

/** The plans of src/platform/plans.ts, in order (the browser test checks they match). */
const PLANS = /** @type {const} */ ([
  { name: 'free', title: 'Free', note: 'no custom domains' },
  { name: 'pro', title: 'Pro', note: 'custom domains' },
  { name: 'enterprise', title: 'Enterprise', note: 'custom domains, higher limits' },
]);

/** @param {string} plan */
const planTitle = (plan) => PLANS.find((p) => p.name === plan)?.title ?? plan;

/** While a message is being attempted, the log is read again this often (backing off while nothing moves). */
const POLL = { minMs: 1000, maxMs: 15_000, factor: 1.6 };

/**
 * Who can act, in words: "owner@x.test" or "Ana (ana@x.test) or owner@x.test".
 * @param {TeamMember[]} owners
 */
function ownerNames(owners) {
  const names = owners.map((o) => (o.name ? `${o.name} (${o.email})` : o.email));
  return names.length <= 1
    ? (names[0] ?? 'a team owner')
    : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

/**
 * The state of a message in words, from the delivery log's fields.
 * @param {WebhookDelivery} d
 */
export function deliveryStatus(d) {
  if (d.state === 'delivered') return { word: 'Delivered', tone: 'live', detail: d.deliveredAt };
  if (d.state === 'failed')
    return {
      word: `Failed after ${d.attempts} ${d.attempts === 1 ? 'attempt' : 'attempts'}`,
      tone: 'failed',
      detail: null,
    };
  if (d.attempts === 0) return { word: 'Sending', tone: 'issuing', detail: null };
  return { word: 'Retrying', tone: 'issuing', detail: d.nextAttemptAt };
}

/**
 * @param {ViewContext} context
 * @param {string} teamIdText
 */
export async function renderTeamSettings({ main, me: signedIn, reloadTeams }, teamIdText) {
  // Signed-in pages only (the shell sends everyone else to sign in first).
  const me = /** @type {import('./types.js').Me} */ (signedIn);
  const teamId = Number(teamIdText);
  const base = `/api/v1/teams/${teamId}`;
  /** @type {Team} */
  let team;
  /** @type {TeamMember[]} */
  let members;
  try {
    if (!Number.isSafeInteger(teamId) || teamId < 1)
      throw new ApiError(404, { code: 'team_not_found', message: `“${teamIdText}” is not a team id.` });
    [team, members] = await Promise.all([api('GET', base), api('GET', `${base}/members`)]);
  } catch (error) {
    notFound(main, 'team', error);
    return;
  }
  pageTitle('Settings', team.name);
  const owners = members.filter((m) => m.role === 'owner');
  const isOwner = team.role === 'owner' || me.isAdmin;
  const page = {
    stopped: false,
    /** @type {ReturnType<typeof setTimeout> | undefined} */ timer: undefined,
    delay: POLL.minMs,
    /** Reads the delivery log again at once (set by the webhook section). @type {() => void} */
    refresh: () => {},
  };
  // Polling pauses while the tab is hidden and picks up again when it is shown.
  const onVisible = () => {
    if (!document.hidden) page.refresh();
  };
  document.addEventListener('visibilitychange', onVisible);

  replaceChildren(
    main,
    teamHeader(
      team,
      'settings',
      team.role === 'owner'
        ? 'You are an owner'
        : team.role === 'member'
          ? 'You are a member'
          : 'You are a platform admin',
    ),
    planSection(),
    isOwner ? webhookSection() : webhookForMembers(),
  );

  return () => {
    page.stopped = true;
    clearTimeout(page.timer);
    document.removeEventListener('visibilitychange', onVisible);
  };

  function planSection() {
    const current = h('span', { class: 'plan plan-large', 'data-testid': 'plan' }, planTitle(team.plan));
    const section = cardSection(
      'plan',
      'Plan',
      h('p', {}, 'This team is on the ', current, ' plan. Custom domains need Pro or Enterprise.'),
    );
    if (!me.isAdmin) {
      section.append(
        h(
          'p',
          { class: 'muted', 'data-testid': 'plan-who' },
          team.role === 'owner'
            ? 'Plans are set by a platform admin (Kennel has no billing). To change this team’s plan, ask whoever runs this Kennel.'
            : `Plans are set by a platform admin (Kennel has no billing). To change it, ask a team owner — ${ownerNames(owners)} — to arrange it with them.`,
        ),
      );
      return section;
    }
    const select = h(
      'select',
      { name: 'plan' },
      PLANS.map((p) =>
        h('option', { value: p.name, selected: p.name === team.plan }, `${p.title} — ${p.note}`),
      ),
    );
    select.value = team.plan;
    const submit = h('button', { type: 'submit', class: 'button button-primary' }, 'Change plan');
    const field = formField({
      id: 'team-plan',
      label: 'Plan',
      control: select,
      extra: submit,
      hint: 'As a platform admin you set the plan of any team; it applies to every project of the team at once.',
    });
    const done = h('p', { class: 'hint', role: 'status' });
    section.append(
      h(
        'form',
        {
          class: 'stack-form',
          async onsubmit(/** @type {SubmitEvent} */ event) {
            event.preventDefault();
            field.clear();
            replaceChildren(done);
            submit.disabled = true;
            submit.textContent = 'Changing…';
            try {
              /** @type {Team} */
              const changed = await api('PUT', `${base}/plan`, { plan: select.value });
              team.plan = changed.plan;
              current.textContent = planTitle(changed.plan);
              replaceChildren(done, `Plan changed to ${planTitle(changed.plan)}.`);
              await reloadTeams().catch(() => {}); // the header catches up on the next load
            } catch (error) {
              field.showError(/** @type {ApiError} */ (error));
            } finally {
              submit.disabled = false;
              submit.textContent = 'Change plan';
            }
          },
        },
        field.element,
        done,
      ),
    );
    return section;
  }

  function webhookForMembers() {
    return cardSection(
      'webhook',
      'Webhook',
      h(
        'p',
        { class: 'muted', 'data-testid': 'webhook-owners-only' },
        `The team’s owners manage its webhook, which sends domain and certificate events to their systems. Ask ${ownerNames(owners)} if you need a change.`,
      ),
    );
  }

  function webhookSection() {
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
      h(
        'p',
        { class: 'muted' },
        'Kennel POSTs the domain and certificate events of every project of this team to one URL, retrying for a day when it fails. Only team owners see this.',
      ),
      secretSlot,
      noticeSlot,
      endpointSlot,
      form,
      deliveriesSection,
    );
    page.refresh = () => void refreshDeliveries(true);
    void load();
    return section;

    async function load() {
      try {
        endpoint = await api('GET', `${base}/webhook`);
      } catch (error) {
        if (!(error instanceof ApiError && error.code === 'webhook_not_found')) {
          replaceChildren(noticeSlot, errorBanner(error, 'The webhook could not be loaded'));
          return;
        }
        endpoint = null;
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
          h(
            'p',
            { class: 'muted' },
            'No endpoint yet: set one to start receiving events. Its signing secret is shown once.',
          ),
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
          h(
            'div',
            { class: 'cell secret-value' },
            h('code', { 'data-testid': 'secret-value' }, secret),
            copy,
          ),
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
        if (!set.secret)
          replaceChildren(noticeSlot, notice('URL changed. The signing secret stays the same.'));
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
        replaceChildren(
          noticeSlot,
          notice(`Test event ${sent.id} queued: follow it in the deliveries below.`),
        );
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
        replaceChildren(deliveriesSlot, deliveriesTable(deliveries));
        page.delay = POLL.minMs;
      } else {
        page.delay = Math.min(POLL.maxMs, Math.round(page.delay * POLL.factor));
      }
      if (deliveries.some((d) => d.state === 'pending') && !document.hidden) {
        page.timer = setTimeout(() => void refreshDeliveries(), page.delay);
      }
    }

    /** @param {WebhookDelivery[]} deliveries */
    function deliveriesTable(deliveries) {
      if (deliveries.length === 0) {
        return emptyState('No deliveries yet', 'Send a test event to check that your receiver answers.');
      }
      return dataTable({
        caption: 'Webhook deliveries, newest first',
        columns: ['Event', 'Status', 'Sent', 'Attempts', 'Response', ''],
        className: 'delivery-table',
        rows: deliveries.map((d) => {
          const status = deliveryStatus(d);
          const again = h(
            'button',
            {
              type: 'button',
              class: 'button button-small',
              'aria-label': `Redeliver ${d.type} ${d.id}`,
              onclick: () => redeliver(d, again),
            },
            'Redeliver',
          );
          return h(
            'tr',
            { 'data-message': d.id },
            cell(
              'Event',
              h('div', {}, h('code', {}, d.type), h('span', { class: 'block hint break' }, d.id)),
            ),
            cell(
              'Status',
              h(
                'div',
                {},
                h(
                  'span',
                  { class: `badge badge-${status.tone}`, 'data-testid': 'delivery-status' },
                  status.word,
                ),
                status.detail
                  ? h(
                      'span',
                      { class: 'block hint' },
                      d.state === 'delivered' ? 'at ' : 'next try ',
                      time(status.detail),
                    )
                  : null,
              ),
            ),
            cell('Sent', time(d.createdAt)),
            cell(
              'Attempts',
              h(
                'div',
                {},
                h('span', { 'data-testid': 'delivery-attempts' }, String(d.attempts)),
                d.log.length > 0 ? attemptLog(d) : null,
              ),
            ),
            h(
              'td',
              { 'data-label': 'Response', 'data-testid': 'delivery-response' },
              d.lastStatus !== null
                ? `HTTP ${d.lastStatus}`
                : d.lastError
                  ? h('span', { class: 'break' }, d.lastError)
                  : '—',
            ),
            cell('Actions', d.state === 'pending' && d.attempts === 0 ? null : again),
          );
        }),
      });
    }
  }
}

/**
 * Every attempt of a message, earlier schedules included (a redelivery starts a new one): when,
 * the answer or why there was none, and how long it took.
 * @param {WebhookDelivery} d
 */
function attemptLog(d) {
  return h(
    'details',
    { class: 'attempt-log' },
    h('summary', {}, 'Log', h('span', { class: 'visually-hidden' }, ` of ${d.type} ${d.id}`)),
    h(
      'ol',
      {},
      d.log.map((a) =>
        h(
          'li',
          { class: a.ok ? 'attempt-ok' : 'attempt-failed' },
          time(a.at),
          h(
            'span',
            { class: 'block break' },
            a.statusCode !== null ? `HTTP ${a.statusCode}` : 'No answer',
            ` in ${a.durationMs} ms`,
            a.error ? `: ${a.error}` : null,
          ),
        ),
      ),
    ),
  );
}

/** @param {string} text */
function notice(text) {
  return h('div', { class: 'banner banner-info', role: 'status' }, h('p', {}, text));
}
