import { createDeliverer } from '../../lib/webhooks/index.ts';
import { WebhookWorker } from '../../storage/index.ts';
import type { PlatformContext } from '../context.ts';
import { endpointResolver, targetPolicy } from './webhook-endpoints.ts';
import { platformOutbox } from './webhook-events.ts';

/**
 * The platform's webhook delivery: a worker over the platform outbox, sending to each team's
 * endpoint within the configured time limit and target policy. Started once per node; several
 * nodes share the outbox through leases.
 */
export function startWebhookWorker(
  ctx: PlatformContext,
  options: { nodeId: string; pollMs?: number; onError: (error: unknown) => void; start?: boolean },
): { wake(): void; runOnce(): Promise<number>; stop(): Promise<void> } {
  const deliverer = createDeliverer({ timeoutMs: ctx.config.webhookTimeoutMs, policy: targetPolicy(ctx) });
  const worker = new WebhookWorker({
    outbox: platformOutbox(ctx.db),
    deliverer,
    resolveEndpoint: endpointResolver(ctx),
    clock: ctx.clock,
    nodeId: options.nodeId,
    pollMs: options.pollMs ?? 5_000,
    onError: options.onError,
  });
  if (options.start !== false) worker.start();
  return {
    wake: () => worker.wake(),
    runOnce: () => worker.runOnce(),
    async stop() {
      await worker.stop();
      await deliverer.close();
    },
  };
}
