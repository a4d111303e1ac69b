// @ts-check
import { h } from './dom.js';
import { formatCount, formatMs, formatRate, moment, operationName } from './traffic-format.js';
import { cell, dataTable, emptyState } from './widgets.js';

/**
 * The Traffic tab's tables: per operation (calls, errors, p99, deprecated and sunset marked), per
 * caller (by its display label, never a credential), and the deprecation reach (who still calls
 * what is going away).
 */

/** @typedef {import('./types.js').TrafficGroup} TrafficGroup */
/** @typedef {import('./types.js').DeprecationReach} DeprecationReach */
/** @typedef {import('./dom.js').Child} Child */

const DAY_MS = 86_400_000;

/** A sunset is a day (`x-sunset: 2026-12-31`): shown as that day, whatever the reader's zone. */
const sunsetDay = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' });

/**
 * "Sunset 30 Jun 2027 (in 215 days)", or "(passed)": the edge answers 410 from then on.
 * @param {string} sunset
 * @param {Date} now
 */
function sunsetWords(sunset, now) {
  const at = Date.parse(sunset);
  if (Number.isNaN(at)) return sunset;
  const days = Math.ceil((at - now.getTime()) / DAY_MS);
  return [
    h('time', { datetime: sunset }, sunsetDay.format(at)),
    h(
      'span',
      { class: days <= 14 ? 'sunset-soon' : 'muted' },
      days <= 0 ? ' (passed: answered 410)' : days === 1 ? ' (tomorrow)' : ` (in ${days} days)`,
    ),
  ];
}

/**
 * @param {TrafficGroup} group
 * @param {Date} now
 */
function lifecycle(group, now) {
  if (!group.deprecated) return h('span', { class: 'muted' }, 'Current');
  return h(
    'span',
    { class: 'lifecycle' },
    h('span', { class: 'badge badge-deprecated' }, 'Deprecated'),
    group.sunset ? h('span', { class: 'sunset' }, 'Sunset ', sunsetWords(group.sunset, now)) : null,
  );
}

/**
 * Calls, errors, error rate and p99 per operation, busiest first.
 * @param {TrafficGroup[]} groups
 * @param {Child} empty what to show when there is no traffic
 * @param {Date} [now]
 */
export function operationTable(groups, empty, now = new Date()) {
  if (groups.length === 0) return empty;
  const rows = [...groups].sort((a, b) => b.requests - a.requests || a.key.localeCompare(b.key));
  return dataTable({
    caption: 'Traffic per operation, busiest first',
    columns: ['Operation', 'Calls', 'Errors', 'Error rate', 'p99', 'Lifecycle'],
    className: 'traffic-table',
    rows: rows.map((g) => {
      const name = operationName(g.operation ?? g.key);
      return h(
        'tr',
        { 'data-operation': g.operation ?? g.key },
        cell(
          'Operation',
          h(
            'div',
            {},
            h('code', { class: 'break' }, name.text),
            name.note ? h('span', { class: 'muted small block' }, name.note) : null,
          ),
        ),
        ...countCells(g),
        cell('Error rate', h('span', { class: 'num' }, formatRate(g.errors, g.requests))),
        cell('p99', h('span', { class: 'num' }, formatMs(g.p99))),
        cell('Lifecycle', lifecycle(g, now)),
      );
    }),
  });
}

/**
 * A group's Calls and Errors cells (errors stand out when there are any).
 * @param {TrafficGroup} g
 */
function countCells(g) {
  return [
    cell('Calls', h('span', { class: 'num', 'data-field': 'calls' }, formatCount(g.requests))),
    cell(
      'Errors',
      h(
        'span',
        { class: `num${g.errors > 0 ? ' has-errors' : ''}`, 'data-field': 'errors' },
        formatCount(g.errors),
      ),
    ),
  ];
}

/** @type {Record<import('./types.js').CallerKind, string>} */
const KINDS = { key: 'API key', address: 'Address', other: 'Others past the cap' };

/** @param {import('./types.js').CallerKind | undefined} kind */
const kindWords = (kind) => (kind ? (KINDS[kind] ?? kind) : '—');

/**
 * Calls, errors and last call per caller, busiest first. A caller is shown by its label: a short
 * prefix of its credential or its truncated address (docs/security.md).
 * @param {TrafficGroup[]} groups
 * @param {Child} empty
 */
export function callerTable(groups, empty) {
  if (groups.length === 0) return empty;
  const rows = [...groups].sort((a, b) => b.requests - a.requests || a.key.localeCompare(b.key));
  return dataTable({
    caption: 'Traffic per caller, busiest first',
    columns: ['Caller', 'Kind', 'Calls', 'Errors', 'Last seen'],
    className: 'traffic-table',
    rows: rows.map((g) => {
      const label = g.caller ?? g.key;
      return h(
        'tr',
        { 'data-caller': label },
        cell('Caller', h('code', { class: 'caller-label' }, operationName(label).text)),
        cell('Kind', kindWords(g.callerKind)),
        ...countCells(g),
        cell('Last seen', g.lastSeenAt ? moment(g.lastSeenAt) : '—'),
      );
    }),
  });
}

/**
 * Each deprecated operation of the live deploy, its sunset, and who called it in the last 7 days
 * with their last call: whom to tell before the sunset.
 * @param {DeprecationReach} reach
 * @param {Date} [now]
 */
export function deprecationPanel(reach, now = new Date()) {
  if (reach.operations.length === 0) {
    return emptyState(
      'No deprecated operations',
      'Mark an operation `deprecated: true` with an `x-sunset` date in the document and deploy it: who still calls it shows here.',
    );
  }
  return h(
    'ul',
    { class: 'reach-list', role: 'list' },
    reach.operations.map((op) =>
      h(
        'li',
        { class: 'reach', 'data-operation': op.operation },
        h(
          'div',
          { class: 'reach-head' },
          h('h3', { class: 'reach-title' }, h('code', { class: 'break' }, op.operation)),
          h(
            'p',
            { class: 'reach-sunset' },
            op.sunset
              ? ['Sunset ', sunsetWords(op.sunset, now)]
              : h('span', { class: 'muted' }, 'No sunset date'),
          ),
        ),
        op.callers.length === 0
          ? h('p', { class: 'reach-none' }, 'No caller in the last 7 days: removing it breaks nobody seen.')
          : [
              h(
                'p',
                { class: 'reach-count' },
                op.callers.length === 1
                  ? '1 caller in the last 7 days:'
                  : `${op.callers.length} callers in the last 7 days:`,
              ),
              dataTable({
                caption: `Callers of ${op.operation} in the last 7 days`,
                columns: ['Caller', 'Kind', 'Calls', 'Last call'],
                className: 'traffic-table',
                rows: op.callers.map((c) =>
                  h(
                    'tr',
                    { 'data-caller': c.caller },
                    cell('Caller', h('code', { class: 'caller-label' }, c.caller)),
                    cell('Kind', kindWords(c.callerKind)),
                    cell('Calls', h('span', { class: 'num' }, formatCount(c.requests))),
                    cell('Last call', moment(c.lastSeenAt)),
                  ),
                ),
              }),
            ],
      ),
    ),
  );
}
