import type { FastifyError, FastifyInstance } from 'fastify';
import { petstoreErrors } from '../errors.ts';

/**
 * Caps the time a request may take with Fastify's own `handlerTimeout`, set on every route as
 * it is registered: past it the answer is 503 `request_timeout` with the Error body. The work
 * the request started is not interrupted (a transaction still commits or rolls back whole),
 * which is why the message says to read before retrying.
 */
export function installDeadline(app: FastifyInstance, timeoutMs: number): void {
  const timedOut = () =>
    petstoreErrors.error(
      'request_timeout',
      `The request took longer than ${timeoutMs / 1000} s and was cut off; it may still have taken effect. Read the resource before retrying, or retry with the same Idempotency-Key.`,
    );
  app.addHook('onRoute', (route) => {
    route.handlerTimeout = timeoutMs;
    // Fastify's timeout error is turned into ours, then handled like every other error.
    route.errorHandler = (error: FastifyError, request, reply) => {
      const handle = app.errorHandler;
      return handle(
        error.code === 'FST_ERR_HANDLER_TIMEOUT' ? (timedOut() as unknown as FastifyError) : error,
        request,
        reply,
      );
    };
  });
}
