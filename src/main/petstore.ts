import { relaunchForCores } from './helper-threads.ts';
// Before the server's modules load: keeps nextTick's fast path (see the module).
import './hold-tick-object.ts';

// Decided before the server's modules load: Node sizes V8's thread pool only at start.
relaunchForCores();
await import('./petstore-server.ts');
