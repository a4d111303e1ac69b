import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AnyOperation } from '../../lib/http-api/index.ts';
import { petstoreErrors } from '../errors.ts';

/**
 * Caps the time a handler may take: past it the answer is 503 `request_timeout` with the Error
 * body. One timer sweeps the handlers in flight (a slot each, see InFlightSlots) rather than a timer, an
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
  const inFlight = new InFlightSlots<FastifyReply>();
  const cutOff = (reply: FastifyReply) => {
    if (reply.sent) return;
    reply.send(
      petstoreErrors.error(
        'request_timeout',
        `The request took longer than ${timeoutMs / 1000} s and was cut off; it may still have taken effect. Read the resource before retrying, or retry with the same Idempotency-Key.`,
      ),
    );
  };
  let timer: NodeJS.Timeout | undefined;
  app.addHook('onReady', (done) => {
    timer = setInterval(
      () => inFlight.expire(performance.now(), cutOff),
      Math.max(10, Math.floor(timeoutMs / 4)),
    );
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
      const slot = inFlight.add(reply, performance.now() + timeoutMs);
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

/**
 * The handlers in flight with their deadlines, in array slots reused as they free up. Not a
 * Map keyed by the reply: a Map that churns is rehashed again and again, and V8 links each old
 * table to its successor (for live iterators), so once one table is promoted every later table
 * and the replies it held survive the young-generation GC. Under load that made each scavenge
 * copy megabytes and pause the process for tens of milliseconds (docs/benchmarks.md, issue 16).
 */
export class InFlightSlots<Item extends object> {
  readonly #items: (Item | undefined)[] = [];
  readonly #deadlines: number[] = [];
  readonly #free: number[] = [];

  /** Holds `item` until `release`; returns its slot. */
  add(item: Item, deadline: number): number {
    const slot = this.#free.pop() ?? this.#items.length;
    this.#items[slot] = item;
    this.#deadlines[slot] = deadline;
    return slot;
  }

  /** Frees the slot `add` returned (once, whether or not it expired). */
  release(slot: number): void {
    this.#items[slot] = undefined;
    this.#free.push(slot);
  }

  /** Hands each item whose deadline has passed to `onExpired`, once; its slot stays taken until released. */
  expire(now: number, onExpired: (item: Item) => void): void {
    for (let slot = 0; slot < this.#items.length; slot++) {
      const item = this.#items[slot];
      if (item === undefined || (this.#deadlines[slot] as number) > now) continue;
      this.#items[slot] = undefined;
      onExpired(item);
    }
  }
}
