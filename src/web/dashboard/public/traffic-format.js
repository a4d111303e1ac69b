// @ts-check
import { formatDate, h } from './dom.js';

/** How the Traffic tab writes its figures: counts, rates, latencies, times with their time zone. */

const count = new Intl.NumberFormat(undefined);

/** @param {number} value */
export const formatCount = (value) => count.format(value);

/**
 * Errors as a share of requests ("2.5%"); "—" without requests.
 * @param {number} errors
 * @param {number} requests
 */
export function formatRate(errors, requests) {
  if (requests <= 0) return '—';
  const percent = (100 * errors) / requests;
  return `${percent === 0 || percent >= 10 ? Math.round(percent) : percent.toFixed(1)}%`;
}

/**
 * A latency in milliseconds ("38 ms", "1.2 s"); "—" when there is none.
 * @param {number | null | undefined} ms
 */
export function formatMs(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '—';
  if (ms >= 1000) return `${(ms / 1000).toFixed(ms >= 10_000 ? 0 : 1)} s`;
  if (ms >= 10) return `${Math.round(ms)} ms`;
  return `${Math.round(ms * 10) / 10} ms`;
}

const clock = new Intl.DateTimeFormat(undefined, {
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  timeZoneName: 'short',
});

/**
 * A moment with its time zone: today's as a clock time ("14:03:07 UTC"), older ones with their
 * date ("27 Nov 2026, 14:03 UTC").
 * @param {string} iso
 * @param {Date} [now]
 */
export function formatMoment(iso, now = new Date()) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  if (date.toDateString() === now.toDateString()) return clock.format(date);
  return formatDate(iso);
}

/**
 * A <time> element showing formatMoment.
 * @param {string} iso
 */
export const moment = (iso) => h('time', { datetime: iso }, formatMoment(iso));

/**
 * A status in words as well as colour: its class (for the colour) and its meaning.
 * @param {number} status
 */
export function statusOf(status) {
  if (status >= 500) return { tone: 'status-5xx', words: 'server error' };
  if (status >= 400) return { tone: 'status-4xx', words: 'client error' };
  if (status >= 300) return { tone: 'status-3xx', words: 'redirect' };
  return { tone: 'status-2xx', words: 'ok' };
}

/**
 * The rows the edge groups apart from the document's operations (src/platform/traffic): requests
 * that matched no operation, and the overflow past the cap on distinct series.
 * @param {string} key
 */
export function operationName(key) {
  if (key === 'unmatched')
    return { text: 'Unmatched', note: 'requests that match no operation of the live deploy' };
  if (key === 'other') return { text: 'Other', note: 'operations past the recording cap, counted together' };
  return { text: key, note: null };
}
