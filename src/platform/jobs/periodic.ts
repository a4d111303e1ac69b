export interface Job {
  /**
   * Runs a pass now instead of at the end of the wait; while a pass runs, the next one starts as
   * soon as it ends. For work that just became due (a domain verified needs its certificate now).
   */
  wake(): void;
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
  let busy = false;
  let again = false;
  const tick = () => {
    busy = true;
    running = pass()
      .then(() => undefined)
      .catch(onError)
      .finally(() => {
        busy = false;
        if (stopped) return;
        timer = setTimeout(tick, again ? 0 : everyMs);
        again = false;
      });
  };
  let timer = setTimeout(tick, 0);
  return {
    wake() {
      if (stopped) return;
      if (busy) {
        again = true;
        return;
      }
      clearTimeout(timer);
      timer = setTimeout(tick, 0);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
