// @ts-check
import { api, slugPath } from './api.js';
import { announce, errorBanner, h, replaceChildren } from './dom.js';
import { formatMs, moment, operationName, statusOf } from './traffic-format.js';
import { emptyState } from './widgets.js';

/**
 * The Traffic tab's live request log: the last requests (listRequestLogs), then each new one as
 * the edge records it (streamRequestLogs, Server-Sent Events through EventSource, which reconnects
 * on its own). Paused, new entries wait and are counted; at most MAX_ROWS rows are kept.
 */

/** @typedef {import('./types.js').RequestLog} RequestLog */

export const MAX_ROWS = 100;

/** @param {RequestLog} entry */
function logRow(entry) {
  const { tone, words } = statusOf(entry.status);
  const caller = entry.caller;
  return h(
    'tr',
    { 'data-id': String(entry.id), 'data-request-id': entry.requestId ?? null },
    h('td', { 'data-label': 'Time' }, moment(entry.at)),
    h(
      'td',
      { 'data-label': 'Request' },
      h(
        'div',
        {},
        h('span', { class: 'method' }, entry.method),
        ' ',
        h('code', { class: 'break' }, entry.path),
        h('span', { class: 'muted small block' }, operationName(entry.operation).text),
      ),
    ),
    h(
      'td',
      { 'data-label': 'Status' },
      h(
        'span',
        { class: `status ${tone}` },
        String(entry.status),
        h('span', { class: 'status-words' }, ` ${words}`),
      ),
    ),
    h('td', { 'data-label': 'Latency' }, h('span', { class: 'num' }, formatMs(entry.latencyMs))),
    h(
      'td',
      { 'data-label': 'Caller' },
      caller ? h('code', { class: 'caller-label' }, caller) : h('span', { class: 'muted' }, '—'),
    ),
    h(
      'td',
      { 'data-label': 'Request ID' },
      entry.requestId ? h('code', { class: 'break request-id' }, entry.requestId) : '—',
    ),
  );
}

/**
 * The log's section content, and `stop` to close the stream when the page is left.
 * @param {{ slug: string, emptyHint: import('./dom.js').Child }} options
 */
export function requestLog({ slug, emptyHint }) {
  /** @type {RequestLog[]} newest first */
  let entries = [];
  /** @type {RequestLog[]} arrived while paused, newest first */
  let waiting = [];
  const seen = new Set();
  let paused = false;
  let stopped = false;
  /** @type {EventSource | null} */
  let source = null;

  const state = h('span', { class: 'live-state', 'data-state': 'connecting' }, 'Connecting…');
  const pause = h(
    'button',
    { type: 'button', class: 'button button-small', 'aria-pressed': 'false' },
    'Pause',
  );
  const body = h('div', { class: 'log-body' }, h('p', { class: 'loading' }, 'Loading the last requests…'));
  const tbody = h('tbody', {});
  const table = h(
    'div',
    // Scrolls on its own: focusable, so the keyboard can scroll it too.
    { class: 'table-wrap log-wrap', tabindex: '0', role: 'region', 'aria-label': 'Request log' },
    h(
      'table',
      { class: 'table log-table', 'data-testid': 'request-log' },
      h('caption', { class: 'visually-hidden' }, `The last requests, newest first (at most ${MAX_ROWS})`),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Time', 'Request', 'Status', 'Latency', 'Caller', 'Request ID'].map((c) =>
            h('th', { scope: 'col' }, c),
          ),
        ),
      ),
      tbody,
    ),
  );

  /** @param {string} which @param {string} words */
  function setState(which, words) {
    state.dataset.state = which;
    state.textContent = words;
  }

  function show() {
    if (entries.length === 0) {
      replaceChildren(body, emptyState('No requests yet', emptyHint));
      return;
    }
    if (!table.isConnected) replaceChildren(body, table);
  }

  /** @param {RequestLog[]} fresh newest first */
  function prepend(fresh) {
    if (fresh.length === 0) return;
    entries = [...fresh, ...entries].slice(0, MAX_ROWS);
    tbody.prepend(...fresh.map(logRow));
    while (tbody.rows.length > MAX_ROWS) tbody.lastElementChild?.remove();
    show();
  }

  /** @param {RequestLog} entry */
  function arrived(entry) {
    if (seen.has(entry.id)) return;
    seen.add(entry.id);
    if (paused) {
      waiting = [entry, ...waiting].slice(0, MAX_ROWS);
      pause.textContent = `Resume (${waiting.length} new)`;
      return;
    }
    prepend([entry]);
  }

  pause.addEventListener('click', () => {
    paused = !paused;
    pause.setAttribute('aria-pressed', String(paused));
    if (paused) {
      pause.textContent = 'Resume';
      announce('Request log paused: new requests wait until you resume.');
    } else {
      const count = waiting.length;
      prepend(waiting);
      waiting = [];
      pause.textContent = 'Pause';
      announce(count === 1 ? 'Resumed: 1 new request shown.' : `Resumed: ${count} new requests shown.`);
    }
  });

  /** @param {number} after the newest id already shown: the stream starts after it */
  function connect(after) {
    if (stopped) return;
    // On a reconnect EventSource sends Last-Event-ID, and the stream resumes after that entry.
    source = new EventSource(`${slugPath(slug)}/logs/stream?after=${after}`);
    source.addEventListener('open', () => setState('live', 'Live'));
    source.addEventListener('error', () => {
      // EventSource tries again by itself; closed means it gave up (a 4xx answer, say).
      if (source?.readyState === EventSource.CLOSED)
        setState('closed', 'Not live: reload the page to try again');
      else setState('connecting', 'Reconnecting…');
    });
    source.addEventListener('message', (event) => {
      try {
        arrived(/** @type {RequestLog} */ (JSON.parse(event.data)));
      } catch {
        // A line that is not an entry (a comment, a keep-alive) is not a request.
      }
    });
  }

  async function start() {
    try {
      /** @type {{ logs: RequestLog[] }} */
      const answer = await api('GET', `${slugPath(slug)}/logs?limit=${MAX_ROWS}`);
      for (const entry of answer.logs) seen.add(entry.id);
      prepend(answer.logs);
      show();
      connect(answer.logs[0]?.id ?? 0);
    } catch (error) {
      replaceChildren(body, errorBanner(error, 'The request log could not be loaded'));
    }
  }

  const element = h(
    'div',
    { class: 'log' },
    h(
      'div',
      { class: 'section-head' },
      h('p', { class: 'live' }, h('span', { class: 'live-dot', 'aria-hidden': 'true' }), state),
      pause,
    ),
    body,
  );
  void start();
  return {
    element,
    stop() {
      stopped = true;
      source?.close();
      source = null;
    },
  };
}
