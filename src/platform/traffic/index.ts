/**
 * Traffic: what the edge records per project (docs/security.md, "Traffic"). The write side
 * (write-traffic.ts, rollup-traffic.ts) is the edge's and the jobs'; the read side (read-*.ts)
 * the API's. Tables: traffic_minutes, traffic_hours, traffic_callers, request_logs
 * (src/platform/db-schema.ts, migration 0011_traffic); readers sum rows across node_id.
 */

/** The operation (and caller) that counts everything past the caps of one window. */
export const TRAFFIC_OTHER = 'other';
/** The operation of a request that matches none of the live document's operations. */
export const TRAFFIC_UNMATCHED = 'unmatched';

export { MINUTES_KEPT_MS, type RollupResult, rollupTraffic } from './rollup-traffic.ts';
export { trafficKey } from './traffic-key.ts';
export {
  type CallerCounts,
  type MinuteCounts,
  type RequestLogEntry,
  type TrafficWriter,
  trafficWriter,
} from './write-traffic.ts';
