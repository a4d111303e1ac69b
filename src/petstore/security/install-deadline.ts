import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AnyOperation } from '../../lib/http-api/index.ts';
import { SlotList } from '../../lib/slot-list.ts';
import { petstoreErrors } from '../errors.ts';

/**
 * Caps the time a handler may take: past it the answer is 503 `request_timeout` with the Error
 * body. One timer sweeps the handlers in flight (a slot each, see SlotList) rather than a timer, an
 * AbortController and response listeners per request, which is what Fastify's own
 * `handlerTimeout` costs and what the read path cannot afford (docs/benchmarks.md). A handler
 * is cut off between `timeoutMs` and 1.25 × `timeoutMs`. The work it started is not
 * interrupted (a transaction still commits or rolls back whole), which is why the message says
 * to read before retrying. Body upload time is bounded by the body cap and Node's
 * `requestTimeout`.
 */
export function installDeadline<Deps>(
  app: FastifyInstance,
  operations: readonly AnyOperation<Deps>[],
  timeoutMs: number,
): AnyOperation<Deps>[] {
  const inFlight = new SlotList<{ reply: FastifyReply; deadline: number }>();
  const sweep = () => {
    const now = performance.now();
    inFlight.forEach((handler) => {
      if (handler.deadline > now) return;
      // Cut off once; the slot stays taken until the handler returns.
      handler.deadline = Number.POSITIVE_INFINITY;
      if (handler.reply.sent) return;
      handler.reply.send(
        petstoreErrors.error(
          'request_timeout',
          `The request took longer than ${timeoutMs / 1000} s and was cut off; it may still have taken effect. Read the resource before retrying, or retry with the same Idempotency-Key.`,
        ),
      );
    });
  };
  let timer: NodeJS.Timeout | undefined;
  app.addHook('onReady', (done) => {
    timer = setInterval(sweep, Math.max(10, Math.floor(timeoutMs / 4)));
    timer.unref();
    done();
  });
  app.addHook('onClose', (_app, done) => {
    clearInterval(timer);
    done();
  });
  return operations.map((op) => ({
    ...op,
    async handler(request, reply, deps) {
      const slot = inFlight.add({ reply, deadline: performance.now() + timeoutMs });
      try {
        const result = await op.handler(request, reply, deps);
        // Cut off meanwhile: the 503 is the answer; returning the reply sends nothing more.
        return reply.sent ? reply : result;
      } finally {
        inFlight.release(slot);
      }
    },
  }));
}
