import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Clock } from '../../src/lib/clock.ts';

export interface ReceivedWebhook {
  readonly id: string;
  readonly timestamp: number;
  readonly type: string;
  readonly body: { type: string; timestamp: string; data: Record<string, unknown> };
}

/**
 * A real webhook receiver on loopback. Every request is checked with the standardwebhooks
 * library's own `Webhook.verify` (signature and timestamp tolerance); one that fails is answered
 * 400 and counted in `rejected`, so a test asserting `rejected` is empty proves every signature.
 * `verify` compares the timestamp with `Date.now()`, so it runs with the test's clock as "now".
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  readonly rejected: string[] = [];
  /** The status to answer verified requests with (e.g. 503 to act as a failing receiver). */
  status = 204;
  secret = '';
  readonly #clock: Clock;
  #server: Server;
  #port = 0;
  #waiters: { count: number; resolve: () => void }[] = [];

  constructor(clock: Clock) {
    this.#clock = clock;
    this.#server = this.#create();
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}/hooks`;
  }

  async start(): Promise<this> {
    await new Promise<void>((done) => this.#server.listen(this.#port, '127.0.0.1', done));
    this.#port = (this.#server.address() as AddressInfo).port;
    return this;
  }

  /** Stops listening: deliveries meet a refused connection until `start()` again. */
  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((done) => this.#server.close(() => done()));
    this.#server = this.#create();
  }

  /** Resolves once `count` webhooks have been received in all. */
  waitFor(count: number): Promise<void> {
    if (this.received.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ count, resolve }));
  }

  types(): string[] {
    return this.received.map((r) => r.type);
  }

  #create(): Server {
    return createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const payload = Buffer.concat(chunks).toString('utf8');
        const headers = {
          'webhook-id': String(req.headers['webhook-id'] ?? ''),
          'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
          'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
        };
        const realNow = Date.now;
        let body: ReceivedWebhook['body'];
        try {
          Date.now = () => this.#clock.now().getTime();
          body = new Webhook(this.secret).verify(payload, headers) as ReceivedWebhook['body'];
        } catch (error) {
          this.rejected.push(`${headers['webhook-id']}: ${(error as Error).message}`);
          res.writeHead(400).end();
          return;
        } finally {
          Date.now = realNow;
        }
        if (this.status < 300) {
          this.received.push({
            id: headers['webhook-id'],
            timestamp: Number(headers['webhook-timestamp']),
            type: body.type,
            body,
          });
          const ready = this.#waiters.filter((w) => this.received.length >= w.count);
          this.#waiters = this.#waiters.filter((w) => this.received.length < w.count);
          for (const w of ready) w.resolve();
        }
        res.writeHead(this.status).end();
      });
    });
  }
}

/** A delivery as a webhooks API lists it (the Petstore's and the platform's): its state and attempts. */
export interface WebhookDelivery {
  id: string;
  type: string;
  state: string;
  attempts: number;
  nextAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  payload: { type: string; timestamp: string; data: Record<string, unknown> };
  log: { attempt: number; at: string; statusCode: number | null; ok: boolean; error: string | null }[];
}
