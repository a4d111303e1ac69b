export { CertificateCache } from './certificate-cache.ts';
export {
  createEdgeHandler,
  type EdgeDeps,
  type EdgeExchange,
  type EdgeHooks,
  hostOf,
  PLATFORM_LABEL,
  UNKNOWN_LABEL,
} from './edge-server.ts';
export { edgeErrors } from './errors.ts';
export { LIVENESS_PATH, NodeHealth, READINESS_PATH, type Readiness } from './health.ts';
export type { EdgeTlsServer } from './http2-server.ts';
export { EdgeMetrics, type ProxyErrorKind, proxyErrorKind, statusClass } from './metrics.ts';
export { type EdgeLogger, observeRequests } from './observe-requests.ts';
export { createOperatorHandler } from './operator-server.ts';
export { type OriginGuard, OriginProxy, originGuard, type ProxyOptions } from './proxy.ts';
export { type Route, RoutingTable } from './routing-table.ts';
export { type EdgeOptions, type StartedEdge, startEdge } from './start-edge.ts';
export { createTlsServer } from './tls-server.ts';
export { type StartedTraffic, startTraffic } from './traffic/index.ts';
