import { randomUUID } from 'node:crypto';

const REQUEST_ID_PREFIX = randomUUID().slice(0, 8);
let requestCounter = 0;

/** Fastify request ids: the caller's `X-Request-Id` when it looks sane, else a new UUID. */
export function requestIdOf(req: { headers: Record<string, string | string[] | undefined> }): string {
  const given = req.headers['x-request-id'];
  if (typeof given === 'string' && /^[\w.:-]{1,128}$/.test(given)) return given;
  // A random per-process prefix and a counter: unique, and cheaper than a UUID per request.
  requestCounter++;
  return `${REQUEST_ID_PREFIX}-${requestCounter.toString(36)}`;
}
