import type { Clock } from '../lib/clock.ts';
import type { Deliverer, DeliveryResult } from '../lib/webhooks/index.ts';
import type { OutboxMessage, WebhookOutbox } from './webhook-outbox.ts';

/** Where an endpoint key sends to now; null when the endpoint is gone (the message then fails). */
export type ResolveEndpoint = (endpointKey: string) => Promise<{ url: string; secret: string } | null>;

export interface WebhookWorkerOptions {
  readonly outbox: WebhookOutbox;
  readonly deliverer: Pick<Deliverer, 'deliver'>;
  readonly resolveEndpoint: ResolveEndpoint;
  readonly clock: Clock;
  /** This process, for leases. */
  readonly nodeId: string;
  /** The longest the loop sleeps without a wake-up (messages enqueued by other nodes, retries). */
  readonly pollMs: number;
  /** Attempts in flight at once. */
  readonly concurrency?: number;
  readonly onError: (error: unknown) => void;
  /** Told after each attempt is recorded (logging, tests). */
  readonly onAttempt?: (message: OutboxMessage, result: DeliveryResult) => void;
}

/**
 * Delivers the outbox: claims due messages, sends each, records the attempt. It runs until
 * stopped, sleeping until the next message is due (at most `pollMs`) unless woken: a caller that
 * has just committed an enqueue calls `wake()` so the message goes out at once.
 */
export class WebhookWorker {
  readonly #o: WebhookWorkerOptions;
  #running = false;
  #loop: Promise<void> | undefined;
  #sleep: { timer: NodeJS.Timeout; resolve: () => void } | undefined;
  #woken = false;

  constructor(options: WebhookWorkerOptions) {
    this.#o = options;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  /** Stops after the attempts in flight are recorded. */
  async stop(): Promise<void> {
    this.#running = false;
    this.wake();
    await this.#loop;
    this.#loop = undefined;
  }

  wake(): void {
    this.#woken = true;
    if (this.#sleep) {
      clearTimeout(this.#sleep.timer);
      this.#sleep.resolve();
    }
  }

  /** One pass: every due message this node could claim is attempted once. Returns how many. */
  async runOnce(): Promise<number> {
    const { outbox, clock, nodeId } = this.#o;
    const concurrency = Math.max(1, this.#o.concurrency ?? 4);
    let total = 0;
    for (;;) {
      const claimed = await outbox.claimDue(nodeId, clock.now(), 20);
      total += claimed.length;
      const queue = [...claimed];
      const worker = async () => {
        for (let message = queue.shift(); message; message = queue.shift()) await this.#attempt(message);
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, worker));
      if (claimed.length < 20) return total;
    }
  }

  async #attempt(message: OutboxMessage): Promise<void> {
    const { outbox, clock, nodeId } = this.#o;
    try {
      const endpoint = await this.#o.resolveEndpoint(message.endpointKey);
      const at = clock.now();
      const result: DeliveryResult = endpoint
        ? await this.#o.deliverer.deliver({
            messageId: message.id,
            url: endpoint.url,
            secret: endpoint.secret,
            body: message.body,
            at,
          })
        : { ok: false, statusCode: null, durationMs: 0, error: 'the webhook endpoint was removed' };
      const after = await outbox.recordAttempt(message.id, nodeId, result, at, { final: !endpoint });
      if (after) this.#o.onAttempt?.(after, result);
    } catch (error) {
      this.#o.onError(error);
    }
  }

  async #run(): Promise<void> {
    while (this.#running) {
      this.#woken = false;
      try {
        await this.runOnce();
      } catch (error) {
        this.#o.onError(error);
      }
      if (!this.#running || this.#woken) continue;
      let waitMs = this.#o.pollMs;
      try {
        const next = await this.#o.outbox.nextDueAt();
        if (next) waitMs = Math.min(waitMs, Math.max(0, next.getTime() - this.#o.clock.now().getTime()));
      } catch (error) {
        this.#o.onError(error);
      }
      if (!this.#running || this.#woken) continue;
      await new Promise<void>((resolve) => {
        this.#sleep = { timer: setTimeout(resolve, Math.max(200, waitMs)), resolve };
      });
      this.#sleep = undefined;
    }
  }
}
