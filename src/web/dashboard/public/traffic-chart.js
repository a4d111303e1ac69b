// @ts-check
import { h, replaceChildren } from './dom.js';
import { formatCount, formatMs, formatRate } from './traffic-format.js';
import { muted } from './widgets.js';

/**
 * The Traffic tab's two charts (requests and error rate; latency p50/p95/p99) drawn with uPlot,
 * which the platform serves from node_modules among the dashboard's assets (docs/decisions/traffic.md,
 * "Traffic charts"). A canvas says nothing to a screen reader, so each chart is an image named by
 * a summary in words, with the figures behind it as a table one click away.
 */

/** @typedef {import('./types.js').TrafficPoint} TrafficPoint */
/** @typedef {typeof import('uplot')} UPlot */
/** @typedef {import('uplot')} UPlotChart */

/** @type {Promise<UPlot> | undefined} */
let library;

/** uPlot, imported the first time a chart is drawn: pages without charts never load it. */
function loadUplot() {
  const url = new URL('./uplot.js', import.meta.url).href;
  library ??= import(url).then((module) => /** @type {UPlot} */ (module.default));
  return library;
}

const STEP = { minute: 60, hour: 3600 };

/** Tick steps of a count axis: whole requests only (uPlot's own would put ticks at 2.5). */
const WHOLE_STEPS = [1, 2, 5]
  .flatMap((m) => [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7].map((p) => m * p))
  .sort((a, b) => a - b);

/**
 * The series on a full grid from `from` to `to`: a bucket without requests is a zero (and no
 * latency), not a line drawn across the gap.
 * @param {{ from: string, to: string, interval: 'minute' | 'hour', series: TrafficPoint[] }} traffic
 */
export function gridOf({ from, to, interval, series }) {
  const step = STEP[interval] ?? 60;
  const start = Math.floor(Date.parse(from) / 1000 / step) * step;
  const end = Math.floor(Date.parse(to) / 1000 / step) * step;
  const byTime = new Map(series.map((point) => [Math.floor(Date.parse(point.at) / 1000), point]));
  /** @type {{ at: number, point: TrafficPoint | undefined }[]} */
  const grid = [];
  for (let at = start; at <= end && grid.length < 5000; at += step) grid.push({ at, point: byTime.get(at) });
  return grid;
}

const timeFormat = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  timeZoneName: 'short',
});

/** @param {number} seconds */
const when = (seconds) => timeFormat.format(new Date(seconds * 1000));

/**
 * @typedef {{ label: string, stroke: string, dash?: number[], scale?: string, fill?: string,
 *   value: (point: TrafficPoint | undefined) => number | null }} Line
 */

/** @type {Line[]} */
const TRAFFIC_LINES = [
  {
    label: 'Requests',
    stroke: '#3b4fd8',
    fill: 'rgba(59, 79, 216, 0.12)',
    value: (p) => p?.requests ?? 0,
  },
  {
    label: 'Error rate',
    stroke: '#b42318',
    dash: [6, 4],
    scale: '%',
    value: (p) => (p && p.requests > 0 ? (100 * p.errors) / p.requests : null),
  },
];

/** @type {Line[]} */
const LATENCY_LINES = [
  { label: 'p50', stroke: '#11703a', value: (p) => p?.p50 ?? null },
  { label: 'p95', stroke: '#8a5300', dash: [6, 4], value: (p) => p?.p95 ?? null },
  { label: 'p99', stroke: '#b42318', dash: [2, 3], value: (p) => p?.p99 ?? null },
];

/**
 * The charts for one answer of getProjectTraffic, and `stop` to let them go. `rangeWords` says the
 * range in words ("the last 24 hours").
 * @param {{ from: string, to: string, interval: 'minute' | 'hour', series: TrafficPoint[] }} traffic
 * @param {string} rangeWords
 */
export function trafficCharts(traffic, rangeWords) {
  const grid = gridOf(traffic);
  const busy = grid.filter((g) => (g.point?.requests ?? 0) > 0);
  const per = traffic.interval === 'hour' ? 'hour' : 'minute';
  const total = busy.reduce((sum, g) => sum + (g.point?.requests ?? 0), 0);
  const errors = busy.reduce((sum, g) => sum + (g.point?.errors ?? 0), 0);
  const peak = busy.reduce((best, g) => ((g.point?.requests ?? 0) > (best.point?.requests ?? 0) ? g : best), {
    at: 0,
    point: /** @type {TrafficPoint | undefined} */ (undefined),
  });
  const worstP99 = busy.reduce((max, g) => Math.max(max, g.point?.p99 ?? 0), 0);
  const trafficSummary =
    total === 0
      ? `No requests in ${rangeWords}.`
      : `${formatCount(total)} requests in ${rangeWords}, at most ${formatCount(peak.point?.requests ?? 0)} in one ${per} (${when(peak.at)}); error rate ${formatRate(errors, total)}.`;
  const latencySummary =
    total === 0
      ? `No latency to show for ${rangeWords}.`
      : `Latency in ${rangeWords}: the slowest ${per} had a p99 of ${formatMs(worstP99)}.`;

  /** @type {UPlotChart[]} */
  const charts = [];
  /** @type {ResizeObserver[]} */
  const observers = [];
  let stopped = false;

  /**
   * @param {string} id
   * @param {string} title
   * @param {string} summary
   * @param {Line[]} lines
   * @param {{ label: string, scale?: string, whole?: boolean, format: (value: number) => string }[]} axes
   */
  function figure(id, title, summary, lines, axes) {
    const canvas = h('div', { class: 'chart-canvas', role: 'img', 'aria-label': `${title}: ${summary}` });
    const table = h('div', { class: 'chart-table' });
    const details = h(
      'details',
      { class: 'chart-details' },
      h('summary', {}, 'The figures as a table'),
      table,
    );
    details.addEventListener(
      'toggle',
      () => {
        if (details.open && !table.firstChild) replaceChildren(table, figuresTable(title, lines));
      },
      { once: false },
    );
    const element = h(
      'figure',
      { class: 'chart', 'aria-labelledby': `${id}-caption`, 'data-testid': id },
      h(
        'figcaption',
        { id: `${id}-caption`, class: 'chart-caption' },
        h('span', { class: 'chart-title' }, title),
        h(
          'span',
          { class: 'chart-legend', 'aria-hidden': 'true' },
          lines.map((line) =>
            h(
              'span',
              { class: 'legend-item' },
              h('span', {
                class: `legend-swatch legend-${line.dash ? (line.dash[0] === 2 ? 'dotted' : 'dashed') : 'solid'}`,
                style: null,
                'data-colour': line.stroke,
              }),
              line.label,
            ),
          ),
        ),
      ),
      canvas,
      h('p', { class: 'chart-summary muted small' }, summary),
      details,
    );
    // The swatches' colours come from the lines (CSP allows no inline style attribute in markup,
    // but a property set from script is fine).
    for (const swatch of element.querySelectorAll('.legend-swatch')) {
      /** @type {HTMLElement} */ (swatch).style.borderTopColor =
        /** @type {HTMLElement} */ (swatch).dataset.colour ?? '';
    }
    return { element, canvas, lines, axes };
  }

  /**
   * @param {string} title
   * @param {Line[]} lines
   */
  function figuresTable(title, lines) {
    if (busy.length === 0) return muted(`No requests in ${rangeWords}.`);
    return h(
      'div',
      { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': `${title}: the figures` },
      h(
        'table',
        { class: 'table table-compact' },
        h('caption', { class: 'visually-hidden' }, `${title}, each ${per} with requests, newest first`),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', { scope: 'col' }, per === 'hour' ? 'Hour' : 'Minute'),
            lines.map((l) => h('th', { scope: 'col' }, l.label)),
          ),
        ),
        h(
          'tbody',
          {},
          [...busy].reverse().map((g) =>
            h(
              'tr',
              {},
              h('td', { 'data-label': per === 'hour' ? 'Hour' : 'Minute' }, when(g.at)),
              lines.map((l) => {
                const value = l.value(g.point);
                return h(
                  'td',
                  { 'data-label': l.label },
                  value === null
                    ? '—'
                    : l.scale === '%'
                      ? formatRate(g.point?.errors ?? 0, g.point?.requests ?? 0)
                      : l.label === 'Requests'
                        ? formatCount(value)
                        : formatMs(value),
                );
              }),
            ),
          ),
        ),
      ),
    );
  }

  const requestsFigure = figure('traffic-chart', 'Requests and error rate', trafficSummary, TRAFFIC_LINES, [
    { label: 'Requests', whole: true, format: (v) => formatCount(v) },
    { label: 'Error rate', scale: '%', format: (v) => `${Math.round(v * 10) / 10}%` },
  ]);
  const latencyFigure = figure('latency-chart', 'Latency p50, p95, p99', latencySummary, LATENCY_LINES, [
    { label: 'Milliseconds', format: (v) => formatMs(v) },
  ]);

  /**
   * Draws into a figure once it is on the page (uPlot needs its width), and follows its width.
   * @param {UPlot} uPlot
   * @param {ReturnType<typeof figure>} target
   */
  function draw(uPlot, target) {
    const width = () => Math.max(240, Math.floor(target.canvas.getBoundingClientRect().width));
    const height = () => (window.innerWidth < 640 ? 180 : 220);
    const xs = grid.map((g) => g.at);
    const sparse = busy.length <= 60;
    const data = /** @type {import('uplot').AlignedData} */ ([
      xs,
      ...target.lines.map((line) => grid.map((g) => line.value(g.point))),
    ]);
    const chart = new uPlot(
      {
        width: width(),
        height: height(),
        legend: { show: false },
        cursor: { drag: { x: false, y: false } },
        scales: {
          x: { time: true },
          ...(target.lines.some((l) => l.scale === '%') ? { '%': { range: [0, 100] } } : {}),
        },
        axes: [
          { stroke: '#596173', grid: { stroke: '#eef0f4' }, ticks: { stroke: '#dfe3ea' } },
          ...target.axes.map((axis, index) => ({
            scale: axis.scale ?? 'y',
            side: index === 0 ? 3 : 1,
            stroke: '#596173',
            size: 64,
            ...(axis.whole ? { incrs: WHOLE_STEPS } : {}),
            grid: { show: index === 0, stroke: '#eef0f4' },
            ticks: { stroke: '#dfe3ea' },
            values: (/** @type {unknown} */ _u, /** @type {number[]} */ ticks) => ticks.map(axis.format),
          })),
        ],
        series: [
          {},
          ...target.lines.map((line) => ({
            label: line.label,
            stroke: line.stroke,
            width: 2,
            scale: line.scale ?? 'y',
            ...(line.dash ? { dash: line.dash } : {}),
            ...(line.fill ? { fill: line.fill } : {}),
            // Latency and error rate exist only where there were requests: joined across the
            // quiet buckets between them, with dots while there are few.
            points: { show: line.scale === '%' || line.label.startsWith('p') ? sparse : false, size: 5 },
            spanGaps: line.label !== 'Requests',
          })),
        ],
      },
      data,
      target.canvas,
    );
    charts.push(chart);
    const observer = new ResizeObserver(() => chart.setSize({ width: width(), height: height() }));
    observer.observe(target.canvas);
    observers.push(observer);
  }

  const element = h('div', { class: 'chart-grid' }, requestsFigure.element, latencyFigure.element);
  return {
    element,
    /** Draws the charts; call once `element` is on the page. */
    async draw() {
      let uPlot;
      try {
        uPlot = await loadUplot();
      } catch {
        for (const f of [requestsFigure, latencyFigure]) {
          replaceChildren(
            f.canvas,
            muted('The chart could not be drawn; the summary below says what it shows.'),
          );
        }
        return;
      }
      if (stopped) return;
      draw(uPlot, requestsFigure);
      draw(uPlot, latencyFigure);
    },
    stop() {
      stopped = true;
      for (const observer of observers) observer.disconnect();
      for (const chart of charts) chart.destroy();
    },
  };
}
