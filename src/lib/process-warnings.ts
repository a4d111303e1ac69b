/** The part of a pino logger this needs (Fastify's `app.log`). */
export interface WarningLog {
  warn(fields: { err: Error }, message: string): void;
}

/**
 * Process warnings (a failing WAL checkpoint from sqlite-checkpointer.ts, node's own deprecation
 * and listener-leak warnings) also go to the service's JSON log, where operators look, not only
 * to stderr as text. Node still prints them to stderr.
 */
export function logProcessWarnings(log: WarningLog): void {
  process.on('warning', (warning) => log.warn({ err: warning }, `process warning: ${warning.message}`));
}
