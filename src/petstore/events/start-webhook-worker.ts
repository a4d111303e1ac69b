import { hostname } from 'node:os';
import type { Clock } from '../../lib/clock.ts';
import { createDeliverer } from '../../lib/webhooks/index.ts';
import { WebhookWorker } from '../../storage/index.ts';
import type { PetstoreDb } from '../store/context.ts';
import { petstoreOutbox } from './emit-event.ts';
import { policyOf, subscriptionResolver, type WebhookSettings } from './subscriptions.ts';

export interface PetstoreWebhooks {
  start(): void;
  wake(): void;
  /** One pass over the due messages (tests drive retries with it and the injected clock). */
  runOnce(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * The Petstore's delivery: the shared engine's worker over the Petstore's outbox, resolving
 * `subscription:<id>` to its URL and opened secret. Several processes on one database share the
 * outbox through leases.
 */
export function petstoreWebhookWorker(
  db: PetstoreDb,
  clock: Clock,
  settings: WebhookSettings & {
    readonly timeoutMs: number;
    readonly pollMs?: number;
    readonly concurrency?: number;
    readonly onError: (error: unknown) => void;
  },
): PetstoreWebhooks {
  const deliverer = createDeliverer({
    timeoutMs: settings.timeoutMs,
    policy: policyOf(settings),
    userAgent: 'Petstore-Webhooks/1',
  });
  const worker = new WebhookWorker({
    outbox: petstoreOutbox(db),
    deliverer,
    resolveEndpoint: subscriptionResolver(db, settings),
    clock,
    nodeId: `${hostname()}:${process.pid}`,
    pollMs: settings.pollMs ?? 5_000,
    concurrency: settings.concurrency ?? 8,
    onError: settings.onError,
  });
  return {
    start: () => worker.start(),
    wake: () => worker.wake(),
    runOnce: () => worker.runOnce(),
    async stop() {
      await worker.stop();
      await deliverer.close();
    },
  };
}
