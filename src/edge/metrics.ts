import { Counter, Histogram, type Registry } from 'prom-client';

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

/** Sorts an undici or socket error into a proxy error kind. */
export function proxyErrorKind(error: unknown): ProxyErrorKind {
  const code = String((error as { code?: unknown } | undefined)?.code ?? '');
  if (code === 'ECONNREFUSED' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'ENOTFOUND')
    return 'connect_refused';
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT') return 'connect_timeout';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return 'timeout';
  if (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_CLOSED')
    return 'reset';
  if (code.startsWith('HPE_') || code === 'UND_ERR_RESPONSE_STATUS_CODE' || code === 'UND_ERR_INFO')
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
  readonly #duration: Histogram<'project' | 'status_class'>;
  readonly #proxyErrors: Counter<'kind'>;
  /** prom-client hashes labels on every observe; a child per label pair is cached instead. */
  readonly #children = new Map<string, { observe(value: number): void }>();

  constructor(registry: Registry) {
    this.#duration = new Histogram({
      name: 'kennel_edge_request_duration_seconds',
      help: 'Edge requests by project and status class: count and latency from arrival to the last byte',
      labelNames: ['project', 'status_class'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
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
    const key = `${project} ${status}`;
    let child = this.#children.get(key);
    if (!child) {
      child = this.#duration.labels(project, status);
      this.#children.set(key, child);
    }
    child.observe(seconds);
  }

  proxyError(kind: ProxyErrorKind): void {
    this.#proxyErrors.inc({ kind });
  }
}
