import { Counter, type Metric, type Registry } from 'prom-client';

/** Request latency buckets, in seconds: from a cached page to a slow origin's timeout. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Why a forward to an origin failed, as a metric label (a closed set). */
export type ProxyErrorKind =
  | 'connect_refused'
  | 'connect_timeout'
  | 'timeout'
  | 'reset'
  | 'bad_response'
  | 'other';

/** Sorts an origin client (src/edge/http1) or socket error into a proxy error kind. */
export function proxyErrorKind(error: unknown): ProxyErrorKind {
  const code = String((error as { code?: unknown } | undefined)?.code ?? '');
  if (code === 'ECONNREFUSED' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'ENOTFOUND')
    return 'connect_refused';
  if (code === 'ORIGIN_CONNECT_TIMEOUT' || code === 'ETIMEDOUT') return 'connect_timeout';
  if (code === 'ORIGIN_HEADERS_TIMEOUT' || code === 'ORIGIN_BODY_TIMEOUT') return 'timeout';
  if (code === 'ORIGIN_CLOSED' || code === 'ECONNRESET' || code === 'EPIPE') return 'reset';
  // An https origin whose certificate does not verify is as unusable as one answering garbage.
  if (code === 'ORIGIN_BAD_RESPONSE' || /^ERR_(TLS|SSL)_|CERT|SIGNATURE|ISSUER/.test(code))
    return 'bad_response';
  return 'other';
}

/** `2xx` … `5xx` from a status code; `aborted` when the response never finished. */
export function statusClass(status: number, finished: boolean): string {
  if (!finished) return 'aborted';
  return status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : 'other';
}

/**
 * The edge's request metrics. Label values are bounded: the project label is a project's slug or
 * one of the reserved labels (`_unknown` for every host no project serves, so a scan of random
 * hostnames cannot create series), and the status is a class, not a code.
 */
export class EdgeMetrics {
  readonly #duration = new RequestDurations();
  readonly #proxyErrors: Counter<'kind'>;

  constructor(registry: Registry) {
    registry.registerMetric(this.#duration as unknown as Metric);
    this.#proxyErrors = new Counter({
      name: 'kennel_edge_proxy_errors_total',
      help: 'Failed forwards to project origins, by kind',
      labelNames: ['kind'],
      registers: [registry],
    });
    for (const kind of [
      'connect_refused',
      'connect_timeout',
      'timeout',
      'reset',
      'bad_response',
      'other',
    ] as const) {
      this.#proxyErrors.inc({ kind }, 0);
    }
  }

  observeRequest(project: string, status: string, seconds: number): void {
    this.#duration.observe(project, status, seconds);
  }

  proxyError(kind: ProxyErrorKind): void {
    this.#proxyErrors.inc({ kind });
  }
}

interface Series {
  readonly labels: { readonly project: string; readonly status_class: string };
  /** Observations per bucket (not cumulative); the last slot is above every bound (+Inf). */
  readonly buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * `kennel_edge_request_duration_seconds`, a Prometheus histogram observed on every request.
 * prom-client's Histogram validates and hashes the labels on every observation, even through a
 * child, which cost the edge a measurable share of its per-request time (docs/benchmarks.md,
 * "Edge"); here an observation is a map lookup and a few additions, and the exposition, in the
 * same text format, is built when Prometheus scrapes (prom-client's Registry calls `get()`).
 */
class RequestDurations {
  readonly name = 'kennel_edge_request_duration_seconds';
  readonly help =
    'Edge requests by project and status class: count and latency from arrival to the last byte';
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #series = new Map<string, Series>();

  observe(project: string, status: string, seconds: number): void {
    const key = `${project}\n${status}`;
    let series = this.#series.get(key);
    if (!series) {
      series = {
        labels: { project, status_class: status },
        buckets: new Float64Array(LATENCY_BUCKETS.length + 1),
        sum: 0,
        count: 0,
      };
      this.#series.set(key, series);
    }
    // A value equal to a bound belongs to that bound's bucket (`le`: less than or equal).
    let bucket = 0;
    while (bucket < LATENCY_BUCKETS.length && seconds > (LATENCY_BUCKETS[bucket] as number)) bucket++;
    (series.buckets[bucket] as number)++;
    series.sum += seconds;
    series.count++;
  }

  get() {
    const values: { metricName: string; labels: Record<string, string | number>; value: number }[] = [];
    for (const { labels, buckets, sum, count } of this.#series.values()) {
      let cumulative = 0;
      for (const [i, le] of [...LATENCY_BUCKETS, '+Inf' as const].entries()) {
        cumulative += buckets[i] as number;
        values.push({ metricName: `${this.name}_bucket`, labels: { le, ...labels }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_sum`, labels, value: sum });
      values.push({ metricName: `${this.name}_count`, labels, value: count });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.#series.clear();
  }
}
