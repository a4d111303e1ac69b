import type { Clock } from '../../lib/clock.ts';
import { LatencySketch } from '../../lib/latency-sketch.ts';
import {
  type CallerCounts,
  type MinuteCounts,
  type RequestLogEntry,
  TRAFFIC_OTHER,
  type TrafficWriter,
} from '../../platform/traffic/index.ts';
import type { Caller } from './identify-caller.ts';

/** One finished API request, as the edge attributes it. */
export interface TrafficRequest {
  readonly projectId: number;
  /** `GET /pets/{petId}`, `unmatched`. */
  readonly operation: string;
  readonly method: string;
  /** The path under the site (`/api/pets/7`), its query reduced to names (`?limit=&status=`). */
  readonly path: string;
  readonly status: number;
  readonly latencyMs: number;
  readonly bytesIn: number;
  readonly bytesOut: number;
  readonly caller: Caller;
  readonly requestId: string;
}

export interface TrafficLimits {
  /** Distinct (project, caller, operation, day) entries per flush window; past it: caller `other`. */
  readonly maxCallers: number;
  /** Distinct operations per project per minute; past it: operation `other`. */
  readonly maxOperations: number;
  /** Request-log entries kept per project between flushes (and in the table, per node). */
  readonly logSize: number;
}

interface Series {
  readonly projectId: number;
  readonly operation: string;
  readonly status: number;
  requests: number;
  errors: number;
  bytesIn: number;
  bytesOut: number;
  readonly latency: LatencySketch;
  dirty: boolean;
}

interface Minute {
  readonly start: number;
  readonly series: Map<string, Series>;
  /** Distinct operations seen per project, for the cap. */
  readonly operations: Map<number, Set<string>>;
}

interface CallerEntry {
  readonly projectId: number;
  readonly caller: string;
  readonly label: string;
  readonly kind: string;
  readonly operation: string;
  readonly day: string;
  requests: number;
  errors: number;
  lastSeenAt: number;
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/** What a status counts as an error: the origin (or the edge) failed; 4xx are kept by status. */
export const isErrorStatus = (status: number) => status >= 500;
const OTHER_CALLER = { caller: TRAFFIC_OTHER, label: TRAFFIC_OTHER, kind: TRAFFIC_OTHER } as const;

/**
 * An edge node's traffic, aggregated in memory and written in batches, so the database's work
 * grows with the number of series, not of requests (docs/decisions.md, "Traffic: batched").
 *
 * - Minutes: one series per project × operation × status, cumulative for its minute; a flush
 *   writes the series that changed since the last one, overwriting the node's own row (only this
 *   node writes rows with its node id), and forgets minutes that are over and written.
 * - Callers: counts per project × caller × operation × day since the last flush, added to the
 *   day's row by the writer.
 * - The request log: per project, the entries since the last log flush (at most `logSize`).
 *
 * Memory is bounded whatever the traffic: operations per project per minute and caller entries
 * per window are capped, the overflow counted under `other`; statuses are 100–599.
 */
export class TrafficRecorder {
  readonly #clock: Clock;
  readonly #writer: TrafficWriter;
  readonly #limits: TrafficLimits;
  readonly #minutes = new Map<number, Minute>();
  #callers = new Map<string, CallerEntry>();
  #logs = new Map<number, LogRing>();
  /** The UTC day of the last request and where it ends, so a request formats no date. */
  #day = '';
  #dayEnds = 0;
  #counting: Promise<void> = Promise.resolve();
  #logging: Promise<void> = Promise.resolve();

  constructor(options: { clock: Clock; writer: TrafficWriter; limits: TrafficLimits }) {
    this.#clock = options.clock;
    this.#writer = options.writer;
    this.#limits = options.limits;
  }

  /** Distinct caller entries held for the next flush (for tests and the soak). */
  get callerEntries(): number {
    return this.#callers.size;
  }

  /** Series held in memory across minutes (for tests and the soak). */
  get seriesCount(): number {
    let n = 0;
    for (const minute of this.#minutes.values()) n += minute.series.size;
    return n;
  }

  record(request: TrafficRequest): void {
    const now = this.#clock.now().getTime();
    const error = isErrorStatus(request.status);
    this.#countMinute(request, now, error);
    this.#countCaller(request, now, error);
    if (this.#limits.logSize > 0) this.#log(request, now);
  }

  #dayOf(now: number): string {
    if (now >= this.#dayEnds || now < this.#dayEnds - DAY_MS) {
      this.#day = new Date(now).toISOString().slice(0, 10);
      this.#dayEnds = now - (now % DAY_MS) + DAY_MS;
    }
    return this.#day;
  }

  #countMinute(request: TrafficRequest, now: number, error: boolean): void {
    const start = now - (now % MINUTE_MS);
    let minute = this.#minutes.get(start);
    if (minute === undefined) {
      minute = { start, series: new Map(), operations: new Map() };
      this.#minutes.set(start, minute);
    }
    let seen = minute.operations.get(request.projectId);
    if (seen === undefined) {
      seen = new Set();
      minute.operations.set(request.projectId, seen);
    }
    let operation = request.operation;
    if (!seen.has(operation)) {
      if (seen.size >= this.#limits.maxOperations) operation = TRAFFIC_OTHER;
      else seen.add(operation);
    }
    const key = `${request.projectId} ${request.status} ${operation}`;
    let series = minute.series.get(key);
    if (series === undefined) {
      series = {
        projectId: request.projectId,
        operation,
        status: request.status,
        requests: 0,
        errors: 0,
        bytesIn: 0,
        bytesOut: 0,
        latency: new LatencySketch(),
        dirty: true,
      };
      minute.series.set(key, series);
    }
    series.requests += 1;
    if (error) series.errors += 1;
    series.bytesIn += request.bytesIn;
    series.bytesOut += request.bytesOut;
    series.latency.record(request.latencyMs);
    series.dirty = true;
  }

  #countCaller(request: TrafficRequest, now: number, error: boolean): void {
    const day = this.#dayOf(now);
    let { caller, label } = request.caller;
    let kind: string = request.caller.kind;
    let key = `${request.projectId} ${day} ${caller} ${request.operation}`;
    let entry = this.#callers.get(key);
    if (entry === undefined && this.#callers.size >= this.#limits.maxCallers) {
      ({ caller, label, kind } = OTHER_CALLER);
      key = `${request.projectId} ${day} ${caller} ${request.operation}`;
      entry = this.#callers.get(key);
    }
    if (entry === undefined) {
      entry = {
        projectId: request.projectId,
        caller,
        label,
        kind,
        operation: request.operation,
        day,
        requests: 0,
        errors: 0,
        lastSeenAt: now,
      };
      this.#callers.set(key, entry);
    }
    entry.requests += 1;
    if (error) entry.errors += 1;
    entry.lastSeenAt = now;
  }

  #log(request: TrafficRequest, now: number): void {
    let ring = this.#logs.get(request.projectId);
    if (ring === undefined) {
      ring = new LogRing(this.#limits.logSize);
      this.#logs.set(request.projectId, ring);
    }
    ring.push(request, now);
  }

  /**
   * Writes the minutes that changed and the callers counted since the last flush, in one
   * transaction. A failed write keeps them for the next flush. Flushes never overlap.
   */
  flushCounts(): Promise<void> {
    this.#counting = this.#counting.catch(() => {}).then(() => this.#writeCounts());
    return this.#counting;
  }

  /** Writes the request-log entries since the last log flush. */
  flushLogs(): Promise<void> {
    this.#logging = this.#logging.catch(() => {}).then(() => this.#writeLogs());
    return this.#logging;
  }

  /** Both, now (tests, shutdown). */
  async flush(): Promise<void> {
    await Promise.all([this.flushCounts(), this.flushLogs()]);
  }

  async #writeCounts(): Promise<void> {
    const now = this.#clock.now().getTime();
    const current = now - (now % MINUTE_MS);
    const written: Series[] = [];
    const minutes: MinuteCounts[] = [];
    for (const minute of this.#minutes.values()) {
      const at = new Date(minute.start).toISOString();
      for (const series of minute.series.values()) {
        if (!series.dirty) continue;
        series.dirty = false;
        written.push(series);
        minutes.push({
          projectId: series.projectId,
          operation: series.operation,
          status: series.status,
          minute: at,
          requests: series.requests,
          errors: series.errors,
          bytesIn: series.bytesIn,
          bytesOut: series.bytesOut,
          latency: series.latency.toJSON(),
        });
      }
    }
    const window = this.#callers;
    this.#callers = new Map();
    const callers: CallerCounts[] = [];
    for (const entry of window.values()) {
      callers.push({
        projectId: entry.projectId,
        caller: entry.caller,
        label: entry.label,
        kind: entry.kind,
        operation: entry.operation,
        day: entry.day,
        requests: entry.requests,
        errors: entry.errors,
        lastSeenAt: new Date(entry.lastSeenAt).toISOString(),
      });
    }
    if (minutes.length === 0 && callers.length === 0) return;
    try {
      await this.#writer.writeCounts({ minutes, callers });
    } catch (error) {
      for (const series of written) series.dirty = true;
      this.#restoreCallers(window);
      throw error;
    }
    // Minutes that are over and fully written are done: the table has their last counts.
    for (const [start, minute] of this.#minutes) {
      if (start < current && ![...minute.series.values()].some((s) => s.dirty)) this.#minutes.delete(start);
    }
  }

  /** Callers of a failed write go back into the window, capped like any others. */
  #restoreCallers(window: Map<string, CallerEntry>): void {
    for (const [key, entry] of window) {
      const held = this.#callers.get(key);
      if (held !== undefined) {
        held.requests += entry.requests;
        held.errors += entry.errors;
        held.lastSeenAt = Math.max(held.lastSeenAt, entry.lastSeenAt);
      } else if (this.#callers.size < this.#limits.maxCallers || entry.caller === TRAFFIC_OTHER) {
        this.#callers.set(key, entry);
      } else {
        const otherKey = `${entry.projectId} ${entry.day} ${TRAFFIC_OTHER} ${entry.operation}`;
        const other = this.#callers.get(otherKey);
        if (other) {
          other.requests += entry.requests;
          other.errors += entry.errors;
          other.lastSeenAt = Math.max(other.lastSeenAt, entry.lastSeenAt);
        } else this.#callers.set(otherKey, { ...entry, ...OTHER_CALLER });
      }
    }
  }

  async #writeLogs(): Promise<void> {
    if (this.#logs.size === 0) return;
    const logs = this.#logs;
    this.#logs = new Map();
    const entries: RequestLogEntry[] = [];
    for (const ring of logs.values()) ring.drain(entries);
    // A failed write drops these entries: the log is a recent sample, not an account.
    await this.#writer.writeLogs(entries, this.#limits.logSize);
  }
}

/**
 * The last `size` requests of one project since the log's last write: a fixed ring, so a busy
 * project costs no allocation beyond the request itself; entries are formatted when written.
 */
class LogRing {
  readonly #requests: (TrafficRequest | undefined)[];
  readonly #times: Float64Array;
  #next = 0;
  #count = 0;

  constructor(size: number) {
    this.#requests = new Array(size);
    this.#times = new Float64Array(size);
  }

  push(request: TrafficRequest, at: number): void {
    this.#requests[this.#next] = request;
    this.#times[this.#next] = at;
    this.#next = (this.#next + 1) % this.#requests.length;
    if (this.#count < this.#requests.length) this.#count += 1;
  }

  /** Appends the held entries, oldest first. */
  drain(into: RequestLogEntry[]): void {
    const size = this.#requests.length;
    for (let i = 0; i < this.#count; i++) {
      const slot = (this.#next - this.#count + i + size) % size;
      const request = this.#requests[slot] as TrafficRequest;
      into.push({
        projectId: request.projectId,
        at: new Date(this.#times[slot] as number).toISOString(),
        method: request.method,
        operation: request.operation,
        path: request.path,
        status: request.status,
        latencyMs: Math.round(request.latencyMs * 1000) / 1000,
        bytesIn: request.bytesIn,
        bytesOut: request.bytesOut,
        callerLabel: request.caller.label,
        requestId: request.requestId,
      });
    }
  }
}

/**
 * Flushes a recorder on its schedule: counts every `flushMs`, the request log every `logFlushMs`.
 * Each next flush is timed from the end of the previous one; `stop` flushes one last time.
 */
export function scheduleTrafficFlushes(
  recorder: TrafficRecorder,
  options: { flushMs: number; logFlushMs: number; onError: (error: unknown) => void },
): { stop(): Promise<void> } {
  let stopped = false;
  const timers: NodeJS.Timeout[] = [];
  const every = (ms: number, flush: () => Promise<void>, slot: number) => {
    const tick = () => {
      flush()
        .catch(options.onError)
        .finally(() => {
          if (!stopped) timers[slot] = setTimeout(tick, ms).unref();
        });
    };
    timers[slot] = setTimeout(tick, ms).unref();
  };
  every(options.flushMs, () => recorder.flushCounts(), 0);
  every(options.logFlushMs, () => recorder.flushLogs(), 1);
  return {
    async stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      await recorder.flush().catch(options.onError);
    },
  };
}
