import { Worker } from 'node:worker_threads';

/**
 * SQLite's WAL checkpoint, on a thread and a connection of its own.
 *
 * A checkpoint copies the pages committed to the write-ahead log back into the database file and
 * calls `fsync` twice. Run by the connection that commits (SQLite's automatic checkpoint, every
 * 1,000 WAL pages), it stalls the event loop for those syscalls: 6–11 ms, twice a second under
 * a stream of orders, which was most of the Petstore's p99 on SQLite (docs/benchmarks.md). Here a
 * worker thread runs a PASSIVE checkpoint every `everyMs`: it never blocks the writer or the
 * readers, and a checkpoint with nothing to copy costs no syscall worth counting.
 *
 * The writer keeps an automatic checkpoint as a backstop (`BACKSTOP_PAGES`, far above what the
 * worker lets the log reach), so a thread that fails cannot let the log grow without bound.
 */
export interface Checkpointer {
  /** Stops the thread and closes its connection (the next close of the writer checkpoints last). */
  close(): Promise<void>;
}

export interface CheckpointerOptions {
  /** Between checkpoints (default 50 ms: the log stays at a few hundred pages under load). */
  readonly everyMs?: number;
  /** A checkpoint that failed for a reason other than a busy database; the thread keeps going. */
  readonly onError?: (error: Error) => void;
}

/** The writer's automatic checkpoint, in WAL pages, while a checkpointer runs. */
export const BACKSTOP_PAGES = 10_000;

/**
 * The thread: one connection, one prepared PRAGMA on a timer. `busy` (another checkpoint, say
 * the writer's backstop, is running) is not an error: the next tick tries again. An error
 * opening the file ends the thread (it is started again).
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.file);
db.exec('PRAGMA synchronous = NORMAL');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const timer = setInterval(() => {
  try {
    checkpoint.get();
  } catch (error) {
    const message = String((error && error.message) || error);
    if (!/busy|locked/i.test(message)) parentPort.postMessage({ error: message });
  }
}, workerData.everyMs);
parentPort.on('message', (message) => {
  if (message !== 'close') return;
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/** Starts checkpointing `file` (already in WAL mode) on a thread; restarts a thread that dies. */
export function startCheckpointer(file: string, options: CheckpointerOptions = {}): Checkpointer {
  const everyMs = options.everyMs ?? 50;
  // A failure repeats on every tick (and every restart): each distinct one is reported once.
  let reported = '';
  const report = (message: string) => {
    if (message === reported) return;
    reported = message;
    const error = new Error(`WAL checkpoint of ${file} failed: ${message}`);
    (options.onError ?? ((e) => process.emitWarning(e)))(error);
  };
  let closing = false;
  let worker: Worker;
  let exited: Promise<void>;
  let restarts = 0;

  const start = () => {
    worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file, everyMs } });
    // The thread never keeps the process alive: a server exits when its listeners close.
    worker.unref();
    worker.on('message', (message: { error?: string }) => {
      if (message.error) report(message.error);
    });
    worker.on('error', (error) => report(error.message));
    exited = new Promise((done) => {
      worker.once('exit', () => {
        done();
        // A thread that died (not closed) is replaced after a pause, longer each time (1 s, 2 s…
        // up to a minute); the writer's backstop covers the gap.
        if (!closing) setTimeout(() => closing || start(), Math.min(60_000, 1_000 * 2 ** restarts++)).unref();
      });
    });
  };
  start();

  return {
    close: async () => {
      if (closing) return;
      closing = true;
      // Held until the thread is gone: a shutdown awaiting this must not see the process exit.
      worker.ref();
      worker.postMessage('close');
      await exited;
    },
  };
}
