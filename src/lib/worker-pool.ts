import { setPriority } from 'node:os';
import { parentPort, type Transferable, Worker, workerData } from 'node:worker_threads';

/**
 * A few worker threads for CPU-bound jobs that must not hold the event loop (a big document to
 * parse, validate or render takes seconds, and the loop serves every tenant). Threads start on
 * first use, at most `size` of them; more jobs wait in order. An idle thread does not keep the
 * process alive and ends after `idleMs`, so the pool needs no closing.
 *
 * A job's request and answer cross by structured clone (strings are copied once; transfer an
 * ArrayBuffer to move it). A job that throws rejects with its message; a thread that dies (out
 * of memory) rejects its job and is replaced by the next job's. Each thread lowers its own priority
 * to `nice` (Linux sets it per thread), so on a busy core the event loop comes first.
 */
export class WorkerPool<Request, Response> {
  readonly #entry: URL;
  readonly #size: number;
  readonly #idleMs: number;
  readonly #nice: number;
  readonly #idle: PooledThread[] = [];
  readonly #waiting: Job[] = [];
  #threads = 0;

  constructor(entry: URL, options: { size: number; idleMs: number; nice?: number }) {
    this.#entry = entry;
    this.#size = Math.max(1, options.size);
    this.#idleMs = options.idleMs;
    this.#nice = options.nice ?? 0;
  }

  run(request: Request): Promise<Response> {
    return new Promise<Response>((resolve, reject) => {
      this.#waiting.push({ request, resolve: resolve as (value: unknown) => void, reject });
      this.#dispatch();
    });
  }

  #dispatch(): void {
    while (this.#waiting.length > 0) {
      const thread = this.#idle.pop() ?? this.#start();
      if (!thread) return;
      clearTimeout(thread.idleTimer);
      thread.worker.ref();
      const job = this.#waiting.shift() as Job;
      thread.job = job;
      thread.worker.postMessage(job.request);
    }
  }

  #start(): PooledThread | undefined {
    if (this.#threads >= this.#size) return undefined;
    this.#threads += 1;
    const thread: PooledThread = {
      worker: new Worker(this.#entry, { workerData: { nice: this.#nice } }),
      job: undefined,
      idleTimer: undefined,
    };
    thread.worker.on('message', (answer: Answer) => {
      const job = thread.job;
      thread.job = undefined;
      if (answer.ok) job?.resolve(answer.value);
      else job?.reject(new Error(answer.message));
      this.#rest(thread);
    });
    // A thread ends once: by its idle timer (already counted out), or by an error or an exit.
    const fail = (error: Error) => {
      if (thread.ended) return;
      thread.ended = true;
      this.#threads -= 1;
      const index = this.#idle.indexOf(thread);
      if (index >= 0) this.#idle.splice(index, 1);
      clearTimeout(thread.idleTimer);
      thread.job?.reject(error);
      thread.job = undefined;
      this.#dispatch();
    };
    thread.worker.on('error', fail);
    thread.worker.on('exit', (code) => fail(new Error(`the worker thread exited (code ${code})`)));
    return thread;
  }

  #rest(thread: PooledThread): void {
    if (this.#waiting.length > 0) {
      this.#idle.push(thread);
      this.#dispatch();
      return;
    }
    thread.worker.unref();
    this.#idle.push(thread);
    thread.idleTimer = setTimeout(() => {
      const index = this.#idle.indexOf(thread);
      if (index < 0) return;
      this.#idle.splice(index, 1);
      this.#threads -= 1;
      thread.ended = true;
      void thread.worker.terminate();
    }, this.#idleMs);
    thread.idleTimer.unref();
  }
}

interface Job {
  readonly request: unknown;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

interface PooledThread {
  readonly worker: Worker;
  job: Job | undefined;
  idleTimer: NodeJS.Timeout | undefined;
  ended?: boolean;
}

type Answer = { ok: true; value: unknown } | { ok: false; message: string };

/**
 * The worker's side: answers each request with `work`'s result (and moves the buffers it lists).
 * Call it once from the worker's entry module.
 */
export function serveWorkerJobs<Request, Response>(
  work: (request: Request) => Promise<{ value: Response; transfer?: Transferable[] }>,
): void {
  const port = parentPort;
  if (!port) throw new Error('serveWorkerJobs runs in a worker thread');
  try {
    setPriority((workerData as { nice: number }).nice);
  } catch {
    // Not permitted or not supported: the thread runs at the loop's priority.
  }
  port.on('message', async (request: Request) => {
    try {
      const { value, transfer } = await work(request);
      port.postMessage({ ok: true, value } satisfies Answer, transfer ?? []);
    } catch (error) {
      port.postMessage({ ok: false, message: (error as Error).message ?? String(error) } satisfies Answer);
    }
  });
}
