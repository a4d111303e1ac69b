import { platformErrors } from '../errors.ts';

/**
 * The time range of a traffic question and the interval its series is drawn at. Minutes are kept
 * 48 hours (then rolled up into hours: docs/traffic.md), so a range of up to 48 hours is drawn by
 * the minute and a longer one by the hour.
 */
export type TrafficInterval = 'minute' | 'hour';

export interface TrafficRange {
  /** Inclusive: the start of the interval holding `since`. */
  readonly from: Date;
  /** Exclusive: the end of the interval holding `until`. */
  readonly to: Date;
  readonly interval: TrafficInterval;
}

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;
/** The longest range drawn by the minute; also how long minutes are kept before the roll-up. */
export const MINUTE_RANGE_MS = 48 * HOUR_MS;
/** The longest range asked at once: hours are kept 30 days by default (TRAFFIC_RETENTION_DAYS). */
export const MAX_RANGE_MS = 400 * DAY_MS;

const UNITS: Readonly<Record<string, number>> = { m: MINUTE_MS, h: HOUR_MS, d: DAY_MS };
const DURATION = /^([1-9]\d{0,4})([mhd])$/;

/** `90m`, `24h`, `7d` in ms, or undefined when the text is not a duration. */
export function parseDuration(text: string): number | undefined {
  const found = DURATION.exec(text);
  return found ? Number(found[1]) * (UNITS[found[2] as string] as number) : undefined;
}

/** The start of the interval holding `at`. */
export function floorTo(at: Date, interval: TrafficInterval): Date {
  const ms = interval === 'minute' ? MINUTE_MS : HOUR_MS;
  return new Date(Math.floor(at.getTime() / ms) * ms);
}

/** `2026-11-27` of a moment (UTC): the day rows of callers are kept by. */
export const isoDay = (at: Date): string => at.toISOString().slice(0, 10);

function instant(name: string, text: string, now: Date): Date {
  const duration = parseDuration(text);
  if (duration !== undefined) return new Date(now.getTime() - duration);
  // A date and time with its zone (`2026-11-27T04:00:00Z`), or a day (`2026-11-27`, UTC).
  if (/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(text)) {
    const at = new Date(text);
    if (Number.isFinite(at.getTime())) return at;
  }
  throw platformErrors.error(
    'validation_failed',
    `${name} "${text.slice(0, 40)}" is neither a duration before now (such as 1h, 24h, 7d, 30d) nor an ISO date and time (such as 2026-11-27T04:00:00Z).`,
  );
}

/**
 * The range `since` (default 24h before now) to `until` (default now): each a duration before
 * now (`1h`, `24h`, `7d`, `30d`) or an ISO date and time.
 */
export function trafficRange(now: Date, since: string | undefined, until: string | undefined): TrafficRange {
  const start = instant('since', since ?? '24h', now);
  const end = until === undefined ? now : instant('until', until, now);
  if (start.getTime() >= end.getTime()) {
    throw platformErrors.error(
      'validation_failed',
      `since (${start.toISOString()}) must be before until (${end.toISOString()}): give an earlier since or a later until.`,
    );
  }
  if (end.getTime() - start.getTime() > MAX_RANGE_MS) {
    throw platformErrors.error(
      'validation_failed',
      `The range from ${start.toISOString()} to ${end.toISOString()} is longer than ${MAX_RANGE_MS / DAY_MS} days: ask for a shorter one (traffic is kept TRAFFIC_RETENTION_DAYS, 30 by default).`,
    );
  }
  const interval: TrafficInterval = end.getTime() - start.getTime() <= MINUTE_RANGE_MS ? 'minute' : 'hour';
  // Whole intervals: from the one holding `since` to the one holding `until` (the current one, by
  // default), so the latest requests are in and every point covers a full interval.
  const step = interval === 'minute' ? MINUTE_MS : HOUR_MS;
  return { from: floorTo(start, interval), to: new Date(floorTo(end, interval).getTime() + step), interval };
}
