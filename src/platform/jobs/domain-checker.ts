import type { PlatformContext } from '../context.ts';
import { checkDueDomains } from '../domains/check-due-domains.ts';

export interface Job {
  stop(): Promise<void>;
}

/**
 * Runs the background domain checks every `everyMs`, one pass at a time. A failing pass is
 * logged and the next one runs as usual.
 */
export function startDomainChecker(
  ctx: PlatformContext,
  options: { everyMs: number; onError: (error: unknown) => void },
): Job {
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const tick = () => {
    running = checkDueDomains(ctx)
      .then(() => undefined)
      .catch(options.onError)
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, options.everyMs);
      });
  };
  let timer = setTimeout(tick, 0);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
