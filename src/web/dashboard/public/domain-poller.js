// @ts-check
/**
 * Polling with back-off (docs/decisions/dashboard.md, "Live updates"): quick after a change or an action,
 * slower while nothing moves, paused while the tab is hidden.
 */

export const POLL = { minMs: 1000, maxMs: 30_000, factor: 1.6 };

/**
 * @param {object} hooks
 * @param {() => Promise<boolean>} hooks.refresh loads and redraws; true when something changed
 * @param {(error: unknown, retryInMs: number) => void} hooks.failed a poll failed
 * @param {() => void} hooks.recovered a poll succeeded (after a failure or not)
 */
export function startPolling({ refresh, failed, recovered }) {
  let delay = POLL.minMs;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  let stopped = false;

  const slower = () => Math.min(POLL.maxMs, Math.round(delay * POLL.factor));

  function schedule() {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(poll, delay);
  }

  async function poll() {
    if (stopped || document.hidden) return; // visibilitychange resumes
    try {
      const changed = await refresh();
      recovered();
      delay = changed ? POLL.minMs : slower();
    } catch (error) {
      delay = slower();
      failed(error, delay);
    }
    schedule();
  }

  /** Polls quickly again: after a click, or when the tab shows. */
  function restart() {
    delay = POLL.minMs;
    schedule();
  }

  const onVisible = () => {
    if (!document.hidden) restart();
  };
  document.addEventListener('visibilitychange', onVisible);
  schedule();

  return {
    restart,
    stop() {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisible);
    },
  };
}
