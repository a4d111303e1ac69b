// @ts-check
import { api, slugPath } from './api.js';
import { announce, errorBanner, h, replaceChildren } from './dom.js';
import { trafficCharts } from './traffic-chart.js';
import { formatCount, formatMoment, formatMs, formatRate } from './traffic-format.js';
import { requestLog } from './traffic-log.js';
import { callerTable, deprecationPanel, operationTable } from './traffic-tables.js';
import { addressOf, loadProject, pageTitle, projectHeader } from './views.js';
import { cardSection, emptyState, muted, sectionHeading, titledSection } from './widgets.js';

/**
 * A project's Traffic tab (issue 27): requests, error rate and latency over a range (1 h, 24 h,
 * 7 d, 30 d), per operation and per caller, who still calls each deprecated operation, and the
 * live request log. The edge writes what it records about every 10 s, so the figures are reloaded
 * that often while the tab is shown.
 */

/** @typedef {import('./types.js').ViewContext} ViewContext */
/** @typedef {import('./types.js').Traffic} Traffic */
/** @typedef {import('./types.js').DeprecationReach} DeprecationReach */

export const RANGES = [
  { key: '1h', label: '1 h', words: 'the last hour' },
  { key: '24h', label: '24 h', words: 'the last 24 hours' },
  { key: '7d', label: '7 d', words: 'the last 7 days' },
  { key: '30d', label: '30 d', words: 'the last 30 days' },
];

const REFRESH_MS = 10_000;

/** @param {string | null} key */
const rangeOf = (key) =>
  RANGES.find((r) => r.key === key) ?? /** @type {(typeof RANGES)[number]} */ (RANGES[1]);

/**
 * @param {ViewContext} context
 * @param {string} slug
 */
export async function renderTraffic({ main }, slug) {
  const project = await loadProject(main, slug);
  if (!project) return;
  pageTitle('Traffic', project.name);
  let range = rangeOf(new URLSearchParams(location.search).get('range'));
  const site = addressOf(project.defaultHost);
  const noTraffic = () => [
    'Requests to ',
    h('code', { class: 'break' }, `${site}/api/…`),
    ' appear here within 10 s.',
  ];

  const radios = RANGES.map((r) =>
    h(
      'label',
      { class: 'segment' },
      h('input', {
        type: 'radio',
        name: 'traffic-range',
        value: r.key,
        checked: r.key === range.key,
      }),
      h('span', {}, r.label),
    ),
  );
  const rangePicker = h(
    'fieldset',
    { class: 'segmented' },
    h('legend', { class: 'visually-hidden' }, 'Time range'),
    radios,
  );
  rangePicker.addEventListener('change', (event) => {
    const input = /** @type {HTMLInputElement} */ (event.target);
    range = rangeOf(input.value);
    const url = new URL(location.href);
    url.searchParams.set('range', range.key);
    history.replaceState(null, '', url);
    void refresh(true);
  });
  const updated = h('p', { class: 'muted small updated', role: 'status' });
  const totalsSlot = h('div', { class: 'totals-slot' });
  const chartsSlot = h('div', { class: 'charts-slot' }, h('p', { class: 'loading' }, 'Loading the traffic…'));
  const operationsSlot = h('div', {});
  const callersSlot = h('div', {});
  const reachSlot = h('div', {});
  const rangeWords = () => h('span', { class: 'range-words' }, range.words);
  const operationsNote = h('p', { class: 'muted' });
  const callersNote = h('p', { class: 'muted' });

  const log = requestLog({ slug, emptyHint: noTraffic() });

  replaceChildren(
    main,
    projectHeader(project, 'traffic'),
    titledSection(
      'card traffic-overview',
      'traffic',
      null,
      h(
        'div',
        { class: 'section-head' },
        sectionHeading('traffic', 'Requests, errors and latency'),
        rangePicker,
      ),
      totalsSlot,
      chartsSlot,
      updated,
    ),
    cardSection('operations', 'Per operation', operationsNote, operationsSlot),
    cardSection('callers', 'Per caller', callersNote, callersSlot),
    cardSection(
      'reach',
      'Deprecation reach',
      muted(
        'Who called each deprecated operation in the last 7 days, and when last: whom to tell before its sunset. From the sunset on, the edge answers 410.',
      ),
      reachSlot,
    ),
    cardSection(
      'log',
      'Live request log',
      muted(
        'Each request as the edge records it: no bodies, no header values, query names without their values.',
      ),
      log.element,
    ),
  );

  /** @type {ReturnType<typeof trafficCharts> | null} */
  let charts = null;
  let shown = '';
  let loading = false;

  /** @param {boolean} [announceIt] */
  async function refresh(announceIt = false) {
    if (loading) return;
    loading = true;
    const asked = range;
    try {
      const base = `${slugPath(slug)}/traffic?since=${asked.key}`;
      /** @type {[Traffic, Traffic, DeprecationReach]} */
      const [byOperation, byCaller, reach] = await Promise.all([
        api('GET', `${base}&by=operation`),
        api('GET', `${base}&by=caller`),
        api('GET', `${slugPath(slug)}/traffic/deprecations`),
      ]);
      if (asked !== range || !main.contains(totalsSlot)) return;
      const answer = JSON.stringify([byOperation.series, byOperation.groups, byCaller.groups, reach]);
      replaceChildren(updated, 'Updated ', formatMoment(new Date().toISOString()), '; refreshed every 10 s.');
      if (answer === shown) return;
      shown = answer;
      draw(byOperation, byCaller, reach);
      if (announceIt)
        announce(`Showing ${asked.words}: ${formatCount(byOperation.totals.requests)} requests.`);
    } catch (error) {
      if (!shown) replaceChildren(chartsSlot, errorBanner(error, 'The traffic could not be loaded'));
      else
        replaceChildren(
          updated,
          h('span', { class: 'stale' }, 'Not updated: ', String(/** @type {Error} */ (error).message)),
        );
    } finally {
      loading = false;
    }
  }

  /**
   * @param {Traffic} byOperation
   * @param {Traffic} byCaller
   * @param {DeprecationReach} reach
   */
  function draw(byOperation, byCaller, reach) {
    const { totals } = byOperation;
    /**
     * @param {string} label
     * @param {string} value
     * @param {string} [note]
     */
    const total = (label, value, note) =>
      h(
        'div',
        { class: 'total' },
        h('dt', {}, label),
        h(
          'dd',
          {},
          h('span', { class: 'total-value' }, value),
          note ? h('span', { class: 'total-note' }, note) : null,
        ),
      );
    replaceChildren(
      totalsSlot,
      h(
        'dl',
        { class: 'totals', 'data-testid': 'traffic-totals' },
        total('Requests', formatCount(totals.requests)),
        total('Errors', formatCount(totals.errors), formatRate(totals.errors, totals.requests)),
        total('p50', formatMs(totals.p50)),
        total('p95', formatMs(totals.p95)),
        total('p99', formatMs(totals.p99)),
      ),
    );
    charts?.stop();
    charts = trafficCharts(byOperation, range.words);
    replaceChildren(chartsSlot, charts.element);
    void charts.draw();
    replaceChildren(operationsNote, 'Calls in ', rangeWords(), '; errors are answers of 500 and above.');
    replaceChildren(
      callersNote,
      'Callers in ',
      rangeWords(),
      ', by API key prefix or by network (/24, /48).',
    );
    const empty = () => emptyState('No traffic yet', noTraffic());
    replaceChildren(operationsSlot, operationTable(byOperation.groups, empty()));
    replaceChildren(callersSlot, callerTable(byCaller.groups, empty()));
    replaceChildren(reachSlot, deprecationPanel(reach));
  }

  await refresh();
  const timer = setInterval(() => {
    if (!document.hidden) void refresh();
  }, REFRESH_MS);
  return () => {
    clearInterval(timer);
    charts?.stop();
    log.stop();
  };
}
