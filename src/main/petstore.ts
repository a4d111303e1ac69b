import { relaunchForCores } from './helper-threads.ts';

// Decided before the server's modules load: Node sizes V8's thread pool only at start.
relaunchForCores();
await import('./petstore-server.ts');
