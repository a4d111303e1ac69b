/**
 * When a webhook message is attempted, as a table: attempt 1 at once, then each retry this long
 * after the previous failure. It is the schedule the Standard Webhooks reference implementation
 * (Svix) uses; the retries span 27 h 35 m 5 s, so a receiver that is down for a whole day still
 * gets the message. After the last row the message is failed (manual redelivery remains).
 */
export const RETRY_SCHEDULE: readonly { readonly attempt: number; readonly delayMs: number }[] = [
  { attempt: 1, delayMs: 0 },
  { attempt: 2, delayMs: 5_000 },
  { attempt: 3, delayMs: 5 * 60_000 },
  { attempt: 4, delayMs: 30 * 60_000 },
  { attempt: 5, delayMs: 2 * 3_600_000 },
  { attempt: 6, delayMs: 5 * 3_600_000 },
  { attempt: 7, delayMs: 10 * 3_600_000 },
  { attempt: 8, delayMs: 10 * 3_600_000 },
];

/**
 * The delay before attempt `failedAttempts + 1`, after `failedAttempts` failures; null when the
 * schedule is exhausted and the message is failed.
 */
export function retryDelay(
  failedAttempts: number,
  schedule: readonly { readonly delayMs: number }[] = RETRY_SCHEDULE,
): number | null {
  const next = schedule[failedAttempts];
  return next === undefined ? null : next.delayMs;
}

/** How long the schedule keeps retrying after the first attempt. */
export function retrySpanMs(schedule: readonly { readonly delayMs: number }[] = RETRY_SCHEDULE): number {
  return schedule.reduce((sum, row) => sum + row.delayMs, 0);
}
