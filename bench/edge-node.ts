import { relaunchForCores } from '../src/main/helper-threads.ts';
// Before the node's modules load: keeps nextTick's fast path (see the module).
import '../src/main/hold-tick-object.ts';

/**
 * One Kennel edge node for the `edge` and `tls` suites, run as its own pinned process:
 *
 *   PORT=… HTTPS_PORT=… STATS_PORT=… EDGE_DATABASE=<sqlite file | postgres URL> EDGE_CERT_KEY=<sealing key>
 *     node --expose-gc bench/edge-node.ts
 *
 * It is the node `npm start` runs (src/main/assemble-platform.ts: the same management app, edge
 * handler and operations hooks, proxy, routing table, certificate cache and TLS listener), without
 * the jobs (`jobs: false`), the Petstore and the operator listener: the database is prepared by
 * the suite before the node starts.
 * STATS_PORT answers `GET /memory` with process.memoryUsage() after a full GC, for the memory
 * figures, and `GET /traffic` with the traffic recorder's held series and callers; it is the
 * benchmark's, not the edge's. EDGE_TRAFFIC=on records traffic as npm start does (TRAFFIC_*
 * settings from the environment); off (the default) records nothing.
 */

// As src/main/platform.ts: pinned to one core, the node restarts itself with one V8 helper thread
// before its modules load, so the suites measure the node production runs.
relaunchForCores();
await import('./edge-node-server.ts');
