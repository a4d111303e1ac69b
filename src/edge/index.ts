export { CertificateCache } from './certificate-cache.ts';
export { createEdgeHandler, type EdgeDeps, hostOf } from './edge-server.ts';
export { edgeErrors } from './errors.ts';
export { OriginProxy, type ProxyOptions } from './proxy.ts';
export { type Route, RoutingTable } from './routing-table.ts';
export { createTlsServer } from './tls-server.ts';
