import type { Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';

/** What draining needs of a listener (node:http's servers, and the edge's HTTP/2 one). */
type Drainable = Pick<HttpServer, 'listening' | 'closeAllConnections' | 'closeIdleConnections'> & {
  close(callback?: () => void): unknown;
};

/**
 * Stops HTTP servers the graceful way: they stop accepting connections at once, requests in
 * flight run to their end, and connections are closed as soon as they are idle — Node's
 * `close()` closes only the connections idle at that moment, so a kept-alive connection whose
 * response ends later is closed here on the next poll instead of lingering for its keep-alive
 * timeout. After `timeoutMs`, whatever is still open is cut. Resolves once every server has closed.
 */
export async function drainServers(
  servers: readonly (HttpServer | HttpsServer | Drainable)[],
  options: { timeoutMs: number; pollMs?: number },
): Promise<{ forced: boolean }> {
  let forced = false;
  const closed = servers.map(
    (server) =>
      new Promise<void>((done) => {
        if (!server.listening) {
          server.closeAllConnections();
          done();
          return;
        }
        server.close(() => done());
      }),
  );
  const poll = setInterval(() => {
    for (const server of servers) server.closeIdleConnections();
  }, options.pollMs ?? 100);
  const deadline = setTimeout(() => {
    forced = true;
    for (const server of servers) server.closeAllConnections();
  }, options.timeoutMs);
  try {
    await Promise.all(closed);
  } finally {
    clearInterval(poll);
    clearTimeout(deadline);
  }
  return { forced };
}
