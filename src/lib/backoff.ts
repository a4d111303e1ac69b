/**
 * Exponential back-off without jitter: base, 2×base, 4×base… capped at max. Deterministic, so
 * tests with a manual clock know when the next attempt is due.
 */
export function backoffDelay(attempt: number, options: { baseMs: number; maxMs: number }): number {
  const exponent = Math.max(0, Math.min(attempt - 1, 30));
  return Math.min(options.maxMs, options.baseMs * 2 ** exponent);
}
