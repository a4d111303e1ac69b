export interface Job {
  stop(): Promise<void>;
}

/**
 * Runs `pass` now and then every `everyMs` after the previous pass ends (never two at once). A
 * failing pass is reported and the next one runs as usual.
 */
export function startPeriodic(
  everyMs: number,
  pass: () => Promise<unknown>,
  onError: (error: unknown) => void,
): Job {
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const tick = () => {
    running = pass()
      .then(() => undefined)
      .catch(onError)
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, everyMs);
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
