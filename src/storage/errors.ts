/** Recognises constraint violations the same way on both dialects. */
function codeOf(error: unknown): { code?: unknown; errcode?: unknown; message?: unknown; cause?: unknown } {
  return (error ?? {}) as { code?: unknown; errcode?: unknown; message?: unknown; cause?: unknown };
}

export function isUniqueViolation(error: unknown): boolean {
  const e = codeOf(error);
  return (
    e.code === '23505' ||
    e.errcode === 2067 ||
    e.errcode === 1555 ||
    /UNIQUE constraint failed/.test(String(e.message))
  );
}

export function isForeignKeyViolation(error: unknown): boolean {
  const e = codeOf(error);
  return e.code === '23503' || e.errcode === 787 || /FOREIGN KEY constraint failed/.test(String(e.message));
}

/**
 * PostgreSQL's "the connection is gone or cannot be made now": class 08 (connection exception),
 * 57P01-57P03 (terminated by an administrator, crash, server starting or stopping) and 53300 (too
 * many connections).
 */
const CONNECTION_SQLSTATES = /^(08[0-9A-Z]{3}|57P0[1-3]|53300)$/;
/** The socket's own failures, as Node reports them while connecting or on a live connection. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
/** What pg and pg-pool say when a connection died under a query or could not be made in time. */
const CONNECTION_MESSAGES =
  /^(Connection terminated( unexpectedly| due to connection timeout)?|Client has encountered a connection error and is not queryable|Client was closed and is not queryable|timeout exceeded when trying to connect|Connection ended unexpectedly)$/;

/**
 * True when a query failed because the database connection was lost or could not be made (the
 * server restarted, an administrator cut the session, the network failed), not because of the
 * query: the same request may succeed once the database answers again. SQLite never fails so.
 */
export function isConnectionLost(error: unknown): boolean {
  for (let e = codeOf(error), depth = 0; depth < 3; e = codeOf(e.cause), depth++) {
    if (typeof e.code === 'string' && (CONNECTION_SQLSTATES.test(e.code) || SOCKET_CODES.has(e.code)))
      return true;
    if (typeof e.message === 'string' && CONNECTION_MESSAGES.test(e.message)) return true;
    if (e.cause === undefined || e.cause === null) return false;
  }
  return false;
}
