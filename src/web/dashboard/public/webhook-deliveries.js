// @ts-check
import { h, time } from './dom.js';
import { cell, dataTable, emptyState } from './widgets.js';

/** A team webhook's delivery log as a table: each message's state, its attempts and a Redeliver button. */

/** @typedef {import('./types.js').WebhookDelivery} WebhookDelivery */

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
 * @param {WebhookDelivery[]} deliveries
 * @param {(delivery: WebhookDelivery, button: HTMLButtonElement) => void} redeliver
 */
export function deliveriesTable(deliveries, redeliver) {
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
        cell('Event', h('div', {}, h('code', {}, d.type), h('span', { class: 'block hint break' }, d.id))),
        cell(
          'Status',
          h(
            'div',
            {},
            h('span', { class: `badge badge-${status.tone}`, 'data-testid': 'delivery-status' }, status.word),
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
