import type { FastifyInstance, FastifyReply } from 'fastify';
import { petstoreErrors } from '../errors.ts';

/**
 * Caps the time a request may take: one timer sweeps the requests in flight instead of a timer
 * per request (cheaper on the hot path), so a request is cut off between `timeoutMs` and
 * 1.25 × `timeoutMs`. Past its deadline it is answered 503 `request_timeout`; the work it
 * started is not interrupted (a transaction still commits or rolls back as a whole), which is why
 * the message says to read before retrying. Node's own `requestTimeout` covers slow uploads.
 */
export function installDeadline(app: FastifyInstance, timeoutMs: number): void {
  const inFlight = new Map<FastifyReply, number>();
  let timer: NodeJS.Timeout | undefined;
  const sweep = () => {
    const now = performance.now();
    for (const [reply, deadline] of inFlight) {
      if (deadline > now) continue;
      inFlight.delete(reply);
      if (reply.sent) continue;
      reply.send(
        petstoreErrors.error(
          'request_timeout',
          `The request took longer than ${timeoutMs / 1000} s and was cut off; it may still have taken effect. Read the resource before retrying, or retry with the same Idempotency-Key.`,
        ),
      );
    }
  };
  app.addHook('onReady', (done) => {
    timer = setInterval(sweep, Math.max(10, Math.floor(timeoutMs / 4)));
    timer.unref();
    done();
  });
  app.addHook('onClose', (_app, done) => {
    clearInterval(timer);
    done();
  });
  app.addHook('onRequest', (_request, reply, done) => {
    inFlight.set(reply, performance.now() + timeoutMs);
    done();
  });
  app.addHook('onResponse', (_request, reply, done) => {
    inFlight.delete(reply);
    done();
  });
}
