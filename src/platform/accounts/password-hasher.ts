import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/** scrypt's cost parameters, as stored with each hash. */
export interface ScryptParams {
  readonly N: number;
  readonly r: number;
  readonly p: number;
  readonly maxmem: number;
}

/** Derives an scrypt key: what verifying a password costs. Injected so tests can count calls. */
export type DeriveKey = (
  password: string,
  salt: Buffer,
  keyLength: number,
  params: ScryptParams,
) => Promise<Buffer>;

/** More password checks asked for than the hasher runs and queues. */
export class HasherBusyError extends Error {
  constructor() {
    super('every password-hashing thread is busy and the queue is full');
    this.name = 'HasherBusyError';
  }
}

export interface PasswordHasherOptions {
  /** Worker threads, hence hashes at once (default: one per two cores, at least one). */
  readonly threads?: number;
  /** Checks that may wait for a thread; beyond, `derive` throws HasherBusyError (default 8 per thread). */
  readonly maxWaiting?: number;
  /**
   * The threads' nice value (Linux: per thread). At 10 a hashing thread gets about a tenth of a
   * core the event loop also wants, so a sign-in flood cannot starve the requests being served.
   */
  readonly nice?: number;
}

/**
 * Each worker runs scryptSync on its own thread, which first lowers its own priority; the
 * libuv threadpool (DNS lookups, file I/O) is not used at all.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { scryptSync } = require('node:crypto');
try { require('node:os').setPriority(workerData.nice); } catch {}
parentPort.on('message', (job) => {
  try {
    const key = scryptSync(job.password, Buffer.from(job.salt), job.keyLength, job.params);
    parentPort.postMessage({ key });
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message || error) });
  }
});
`;

interface Job {
  readonly password: string;
  readonly salt: Buffer;
  readonly keyLength: number;
  readonly params: ScryptParams;
  resolve(key: Buffer): void;
  reject(error: Error): void;
}

interface Slot {
  readonly worker: Worker;
  job: Job | undefined;
  lost: boolean;
}

/**
 * scrypt for sign-ins, off the event loop and off the libuv threadpool, at most `threads` at
 * once at a lower CPU priority, with a bounded queue: a flood of sign-ins costs the node at most
 * those threads' (niced) CPU and a fixed amount of memory (scrypt N=2^17, r=8 takes 128 MiB each).
 */
export class PasswordHasher {
  readonly threads: number;
  readonly maxWaiting: number;
  readonly nice: number;
  readonly #slots: Slot[] = [];
  readonly #waiting: Job[] = [];
  #closed = false;

  constructor(options: PasswordHasherOptions = {}) {
    this.threads = options.threads ?? Math.max(1, Math.floor(availableParallelism() / 2));
    this.maxWaiting = options.maxWaiting ?? 8 * this.threads;
    this.nice = options.nice ?? 10;
  }

  /** Checks running now, and waiting for a thread. */
  get load(): { running: number; waiting: number } {
    return { running: this.#slots.filter((s) => s.job).length, waiting: this.#waiting.length };
  }

  readonly derive: DeriveKey = (password, salt, keyLength, params) =>
    new Promise<Buffer>((resolve, reject) => {
      if (this.#closed) throw new Error('the password hasher is closed');
      const job: Job = { password, salt, keyLength, params, resolve, reject };
      const slot = this.#idleSlot();
      if (slot) this.#run(slot, job);
      else if (this.#waiting.length < this.maxWaiting) this.#waiting.push(job);
      else throw new HasherBusyError();
    });

  /** Stops the threads; checks still waiting fail. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#waiting.splice(0)) job.reject(new Error('the password hasher is closed'));
    await Promise.all(this.#slots.splice(0).map((slot) => slot.worker.terminate()));
  }

  #idleSlot(): Slot | undefined {
    const idle = this.#slots.find((s) => !s.job);
    if (idle || this.#slots.length >= this.threads) return idle;
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { nice: this.nice } });
    const slot: Slot = { worker, job: undefined, lost: false };
    worker.on('message', (answer: { key?: Uint8Array; error?: string }) => {
      const job = slot.job;
      slot.job = undefined;
      if (answer.key) job?.resolve(Buffer.from(answer.key));
      else job?.reject(new Error(`scrypt failed: ${answer.error}`));
      this.#next(slot);
    });
    // A thread that dies takes its check with it; the next check starts a new thread.
    const lost = (error: Error) => {
      if (slot.lost) return; // 'error' is followed by 'exit'
      slot.lost = true;
      const index = this.#slots.indexOf(slot);
      if (index !== -1) this.#slots.splice(index, 1);
      slot.job?.reject(error);
      slot.job = undefined;
      const waiting = this.#waiting.shift();
      if (waiting && !this.#closed) {
        const replacement = this.#idleSlot();
        if (replacement) this.#run(replacement, waiting);
        else this.#waiting.unshift(waiting);
      }
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`the hashing thread exited (${code})`)));
    worker.unref();
    this.#slots.push(slot);
    return slot;
  }

  #run(slot: Slot, job: Job): void {
    slot.job = job;
    // Keeps the process alive while a check runs, not while the thread idles.
    slot.worker.ref();
    slot.worker.postMessage({
      password: job.password,
      salt: job.salt,
      keyLength: job.keyLength,
      params: job.params,
    });
  }

  #next(slot: Slot): void {
    const job = this.#waiting.shift();
    if (job) this.#run(slot, job);
    else slot.worker.unref();
  }
}
