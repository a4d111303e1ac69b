import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkerPool } from '../../src/lib/worker-pool.ts';

/**
 * A worker speaking the pool's protocol (what serveWorkerJobs answers): it echoes `{ wait, value }`
 * after `wait` ms with its thread id, throws on `fail`, and exits on `exit`.
 */
const ECHO = new URL(
  `data:text/javascript,${encodeURIComponent(`
import { parentPort, threadId } from 'node:worker_threads';
parentPort.on('message', async (job) => {
  if (job.exit) process.exit(3);
  await new Promise((resolve) => setTimeout(resolve, job.wait ?? 0));
  if (job.fail) parentPort.postMessage({ ok: false, message: job.fail });
  else parentPort.postMessage({ ok: true, value: { value: job.value, thread: threadId } });
});
`)}`,
);

interface Job {
  value?: number;
  wait?: number;
  fail?: string;
  exit?: boolean;
}

describe('WorkerPool', () => {
  it('runs at most `size` jobs at once, the rest in order', async () => {
    const pool = new WorkerPool<Job, { value: number; thread: number }>(ECHO, { size: 2, idleMs: 1000 });
    const started = performance.now();
    const answers = await Promise.all([1, 2, 3, 4].map((value) => pool.run({ value, wait: 100 })));
    assert.deepEqual(
      answers.map((a) => a.value),
      [1, 2, 3, 4],
    );
    assert.equal(new Set(answers.map((a) => a.thread)).size, 2);
    assert.ok(performance.now() - started >= 195, 'four 100 ms jobs on two threads take two rounds');
  });

  it("rejects a job that fails with the worker's message, and a job whose thread dies; the next job gets a new thread", async () => {
    const pool = new WorkerPool<Job, { value: number; thread: number }>(ECHO, { size: 1, idleMs: 1000 });
    const first = await pool.run({ value: 1 });
    await assert.rejects(pool.run({ fail: 'no such thing' }), { message: 'no such thing' });
    assert.equal((await pool.run({ value: 2 })).thread, first.thread);
    await assert.rejects(pool.run({ exit: true }), { message: 'the worker thread exited (code 3)' });
    const after = await pool.run({ value: 3 });
    assert.equal(after.value, 3);
    assert.notEqual(after.thread, first.thread);
  });

  it('ends a thread idle for idleMs and starts another for the next job', async () => {
    const pool = new WorkerPool<Job, { value: number; thread: number }>(ECHO, { size: 1, idleMs: 50 });
    const first = await pool.run({ value: 1 });
    assert.equal((await pool.run({ value: 2 })).thread, first.thread);
    await sleep(300);
    assert.notEqual((await pool.run({ value: 3 })).thread, first.thread);
  });
});
