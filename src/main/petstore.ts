import { relaunchForCores } from './gc-threads.ts';

// Decided before the server's modules load: V8 takes its collector's flags only at start.
relaunchForCores();
await import('./petstore-server.ts');
