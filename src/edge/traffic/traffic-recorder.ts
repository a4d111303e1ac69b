import { type Clock, systemClock } from '../../lib/clock.ts';
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

/** One project's series in one minute: by operation, then by status. */
interface ProjectMinute {
  readonly operations: Map<string, Map<number, Series>>;
  /** Operations counted apart so far (the cap's count; `other` is not one of them). */
  distinct: number;
}

interface Minute {
  readonly start: number;
  readonly projects: Map<number, ProjectMinute>;
  /** Every series of the minute, in the order they began (what a flush walks). */
  readonly series: Series[];
}

/** A caller's counts while they are counted: its last request as epoch ms, formatted when written. */
interface CallerEntry extends Omit<CallerCounts, 'requests' | 'errors' | 'lastSeenAt'> {
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
 * grows with the number of series, not of requests (docs/decisions/traffic.md, "Batches, one transaction per node").
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
  /** On the system clock a request reads `Date.now()` directly (no Date, no indirect call). */
  readonly #systemClock: boolean;
  readonly #writer: TrafficWriter;
  readonly #limits: TrafficLimits;
  readonly #minutes = new Map<number, Minute>();
  /** The minute the last request counted in (most requests count in the one before them). */
  #minute: Minute | undefined;
  #callers = new Map<string, CallerEntry>();
  /**
   * A shortcut into `#callers` for this window: by the caller object (CallerIdentity hands out
   * the same one for a returning caller) and operation, so a returning caller builds no key
   * string. At most `maxCallers` shortcuts; emptied with the window.
   */
  #shortcuts = new Map<Caller, Map<string, CallerEntry>>();
  #shortcutCount = 0;
  #logs = new Map<number, LogRing>();
  /**
   * What the last request counted in, by what it asked for (project, operation, status; the
   * caller and operation; the project): a busy API's next request is most often the same
   * series, caller and log, found then with a few comparisons instead of map lookups. Forgotten
   * whenever what they point to may be let go (a written minute, a caller window, an idle ring).
   * Measured, not assumed: without it the edge suite's recording pairs fell to 95.8% of traffic
   * off, against 97.9% and 99.1% with it (docs/benchmarks.md, "Edge").
   */
  #last: {
    series: Series | undefined;
    seriesStart: number;
    projectId: number;
    operation: string;
    status: number;
    callerEntry: CallerEntry | undefined;
    caller: Caller | undefined;
    callerOperation: string;
    ring: LogRing | undefined;
    ringProjectId: number;
  } = {
    series: undefined,
    seriesStart: 0,
    projectId: 0,
    operation: '',
    status: 0,
    callerEntry: undefined,
    caller: undefined,
    callerOperation: '',
    ring: undefined,
    ringProjectId: 0,
  };
  /** The UTC day of the last request and where it ends, so a request formats no date. */
  #day = '';
  #dayEnds = 0;
  #counting: Promise<void> = Promise.resolve();
  #logging: Promise<void> = Promise.resolve();

  constructor(options: { clock: Clock; writer: TrafficWriter; limits: TrafficLimits }) {
    const clock = options.clock;
    this.#clock = clock;
    this.#systemClock = clock === systemClock;
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
    for (const minute of this.#minutes.values()) n += minute.series.length;
    return n;
  }

  /** Counts one request. `request` itself is not kept (its fields are copied): it may be reused. */
  record(request: TrafficRequest): void {
    const now = this.#now();
    const error = isErrorStatus(request.status);
    this.#countMinute(request, now, error);
    this.#countCaller(request, now, error);
    if (this.#limits.logSize > 0) this.#log(request, now);
  }

  /** Epoch ms. */
  #now(): number {
    return this.#systemClock ? Date.now() : this.#clock.now().getTime();
  }

  #dayOf(now: number): string {
    if (now >= this.#dayEnds || now < this.#dayEnds - DAY_MS) {
      this.#day = new Date(now).toISOString().slice(0, 10);
      this.#dayEnds = now - (now % DAY_MS) + DAY_MS;
    }
    return this.#day;
  }

  #minuteOf(now: number): Minute {
    const start = now - (now % MINUTE_MS);
    if (this.#minute !== undefined && this.#minute.start === start) return this.#minute;
    let minute = this.#minutes.get(start);
    if (minute === undefined) {
      minute = { start, projects: new Map(), series: [] };
      this.#minutes.set(start, minute);
    }
    this.#minute = minute;
    return minute;
  }

  #countMinute(request: TrafficRequest, now: number, error: boolean): void {
    const minute = this.#minuteOf(now);
    const last = this.#last;
    let series = last.series;
    if (
      series === undefined ||
      last.seriesStart !== minute.start ||
      last.projectId !== request.projectId ||
      last.operation !== request.operation ||
      last.status !== request.status
    ) {
      series = this.#seriesOf(minute, request);
      last.series = series;
      last.seriesStart = minute.start;
      last.projectId = request.projectId;
      last.operation = request.operation;
      last.status = request.status;
    }
    series.requests += 1;
    if (error) series.errors += 1;
    series.bytesIn += request.bytesIn;
    series.bytesOut += request.bytesOut;
    series.latency.record(request.latencyMs);
    series.dirty = true;
  }

  /** The series of a request in a minute, made on its first request (past the cap: `other`). */
  #seriesOf(minute: Minute, request: TrafficRequest): Series {
    let project = minute.projects.get(request.projectId);
    if (project === undefined) {
      project = { operations: new Map(), distinct: 0 };
      minute.projects.set(request.projectId, project);
    }
    let operation = request.operation;
    let statuses = project.operations.get(operation);
    if (statuses === undefined) {
      if (project.distinct >= this.#limits.maxOperations) {
        operation = TRAFFIC_OTHER;
        statuses = project.operations.get(operation);
      } else project.distinct += 1;
      if (statuses === undefined) {
        statuses = new Map();
        project.operations.set(operation, statuses);
      }
    }
    let series = statuses.get(request.status);
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
      statuses.set(request.status, series);
      minute.series.push(series);
    }
    return series;
  }

  #countCaller(request: TrafficRequest, now: number, error: boolean): void {
    const day = this.#dayOf(now);
    const last = this.#last;
    let known = last.callerEntry;
    if (known === undefined || last.caller !== request.caller || last.callerOperation !== request.operation) {
      known = this.#shortcuts.get(request.caller)?.get(request.operation);
    }
    if (known !== undefined && known.day === day && known.projectId === request.projectId) {
      known.requests += 1;
      if (error) known.errors += 1;
      known.lastSeenAt = now;
      last.callerEntry = known;
      last.caller = request.caller;
      last.callerOperation = request.operation;
      return;
    }
    const byOperation = this.#shortcuts.get(request.caller);
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
    if (this.#shortcutCount < this.#limits.maxCallers) {
      if (byOperation === undefined)
        this.#shortcuts.set(request.caller, new Map([[request.operation, entry]]));
      else byOperation.set(request.operation, entry);
      this.#shortcutCount += 1;
    }
  }

  #log(request: TrafficRequest, now: number): void {
    const last = this.#last;
    let ring = last.ring;
    if (ring === undefined || last.ringProjectId !== request.projectId) {
      ring = this.#logs.get(request.projectId);
      if (ring === undefined) {
        ring = new LogRing(this.#limits.logSize);
        this.#logs.set(request.projectId, ring);
      }
      last.ring = ring;
      last.ringProjectId = request.projectId;
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

  /**
   * Writes the request-log entries since the last log flush. With `busyEveryMs` (the schedule's
   * flushes), a busy project — more requests since its last write than the log keeps, so its
   * table would hold only the latest of them anyway — is written at most that often: a node
   * serving thousands of requests a second writes `logSize` rows per project every few seconds,
   * not every second, and its table still holds the last `logSize` requests as of its last write.
   */
  flushLogs(options: { busyEveryMs?: number } = {}): Promise<void> {
    this.#logging = this.#logging.catch(() => {}).then(() => this.#writeLogs(options.busyEveryMs));
    return this.#logging;
  }

  /** Both, now (tests, shutdown). */
  async flush(): Promise<void> {
    await Promise.all([this.flushCounts(), this.flushLogs()]);
  }

  async #writeCounts(): Promise<void> {
    const now = this.#now();
    const current = now - (now % MINUTE_MS);
    const written: Series[] = [];
    const minutes: MinuteCounts[] = [];
    for (const minute of this.#minutes.values()) {
      const at = new Date(minute.start).toISOString();
      for (const series of minute.series) {
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
    this.#shortcuts = new Map();
    this.#shortcutCount = 0;
    this.#last.callerEntry = undefined;
    this.#last.caller = undefined;
    const callers: CallerCounts[] = [];
    for (const entry of window.values()) {
      callers.push({ ...entry, lastSeenAt: new Date(entry.lastSeenAt).toISOString() });
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
      if (start < current && !minute.series.some((s) => s.dirty)) {
        this.#minutes.delete(start);
        if (this.#minute === minute) this.#minute = undefined;
        if (this.#last.seriesStart === start) this.#last.series = undefined;
      }
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

  async #writeLogs(busyEveryMs: number | undefined): Promise<void> {
    const now = this.#now();
    const entries: RequestLogEntry[] = [];
    // A ring is emptied and kept while its project is called; a project with no request since
    // the last write gives its ring back (memory stays with the projects being called).
    for (const [projectId, ring] of this.#logs) {
      if (ring.empty) {
        this.#logs.delete(projectId);
        if (this.#last.ring === ring) this.#last.ring = undefined;
      } else if (busyEveryMs === undefined || !ring.overflowed || now - ring.writtenAt >= busyEveryMs) {
        ring.drain(projectId, entries, now);
      }
    }
    if (entries.length === 0) return;
    // A failed write drops these entries: the log is a recent sample, not an account.
    await this.#writer.writeLogs(entries, this.#limits.logSize);
  }
}

/**
 * The last `size` requests of one project since the log's last write, field by field in fixed
 * arrays: the request object itself is not kept, so it dies young with the rest of its request
 * (kept, a busy node's last thousand requests would be copied by every minor collection).
 * Entries are formatted when written.
 */
class LogRing {
  readonly #size: number;
  readonly #times: Float64Array;
  readonly #latencies: Float64Array;
  readonly #bytesIn: Float64Array;
  readonly #bytesOut: Float64Array;
  readonly #statuses: Uint16Array;
  readonly #methods: string[];
  readonly #operations: string[];
  readonly #paths: string[];
  readonly #labels: string[];
  readonly #ids: string[];
  #next = 0;
  #count = 0;
  /** Requests since the last write, counting those the ring no longer holds. */
  #pushed = 0;
  /** When the ring was last written (epoch ms). */
  writtenAt = Number.NEGATIVE_INFINITY;

  constructor(size: number) {
    this.#size = size;
    this.#times = new Float64Array(size);
    this.#latencies = new Float64Array(size);
    this.#bytesIn = new Float64Array(size);
    this.#bytesOut = new Float64Array(size);
    this.#statuses = new Uint16Array(size);
    this.#methods = new Array<string>(size).fill('');
    this.#operations = new Array<string>(size).fill('');
    this.#paths = new Array<string>(size).fill('');
    this.#labels = new Array<string>(size).fill('');
    this.#ids = new Array<string>(size).fill('');
  }

  push(request: TrafficRequest, at: number): void {
    const slot = this.#next;
    this.#times[slot] = at;
    this.#latencies[slot] = request.latencyMs;
    this.#bytesIn[slot] = request.bytesIn;
    this.#bytesOut[slot] = request.bytesOut;
    this.#statuses[slot] = request.status;
    this.#methods[slot] = request.method;
    this.#operations[slot] = request.operation;
    this.#paths[slot] = request.path;
    this.#labels[slot] = request.caller.label;
    this.#ids[slot] = request.requestId;
    this.#next = slot + 1 === this.#size ? 0 : slot + 1;
    if (this.#count < this.#size) this.#count += 1;
    this.#pushed += 1;
  }

  get empty(): boolean {
    return this.#count === 0;
  }

  /** Whether requests went by since the last write that the ring no longer holds. */
  get overflowed(): boolean {
    return this.#pushed > this.#size;
  }

  /** Appends the held entries of project `projectId`, oldest first, and forgets them. */
  drain(projectId: number, into: RequestLogEntry[], now: number): void {
    const size = this.#size;
    const iso = isoTimes();
    for (let i = 0; i < this.#count; i++) {
      const slot = (this.#next - this.#count + i + size) % size;
      into.push({
        projectId,
        at: iso(this.#times[slot] as number),
        method: this.#methods[slot] as string,
        operation: this.#operations[slot] as string,
        path: this.#paths[slot] as string,
        status: this.#statuses[slot] as number,
        latencyMs: Math.round((this.#latencies[slot] as number) * 1000) / 1000,
        bytesIn: this.#bytesIn[slot] as number,
        bytesOut: this.#bytesOut[slot] as number,
        callerLabel: this.#labels[slot] as string,
        requestId: this.#ids[slot] as string,
      });
    }
    this.#count = 0;
    this.#pushed = 0;
    this.writtenAt = now;
  }
}

/** The last ms an ISO string of 24 characters can show (9999-12-31T23:59:59.999Z). */
const LAST_SHORT_ISO_MS = 253_402_300_799_999;

/**
 * `new Date(ms).toISOString()` for many times in a row, with one Date per second: the times of a
 * second share everything up to the milliseconds (a log flush formats up to REQUEST_LOG_SIZE).
 */
function isoTimes(): (ms: number) => string {
  let second = Number.NaN;
  let prefix = '';
  return (ms) => {
    if (!Number.isInteger(ms) || ms < 0 || ms > LAST_SHORT_ISO_MS) return new Date(ms).toISOString();
    const at = ms % 1000;
    if (ms - at !== second) {
      second = ms - at;
      prefix = new Date(second).toISOString().slice(0, 20);
    }
    return `${prefix}${at < 10 ? '00' : at < 100 ? '0' : ''}${at}Z`;
  };
}

/**
 * Flushes a recorder on its schedule: counts every `flushMs`, the request log every `logFlushMs`
 * (a busy project's every `busyLogFlushMs`: see `flushLogs`). Each next flush is timed from the
 * end of the previous one; `stop` flushes everything one last time.
 */
export function scheduleTrafficFlushes(
  recorder: TrafficRecorder,
  options: {
    flushMs: number;
    logFlushMs: number;
    busyLogFlushMs: number;
    onError: (error: unknown) => void;
  },
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
  every(options.logFlushMs, () => recorder.flushLogs({ busyEveryMs: options.busyLogFlushMs }), 1);
  return {
    async stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      await recorder.flush().catch(options.onError);
    },
  };
}
