import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { gcFlagsFor, SINGLE_THREADED_GC } from '../../src/main/gc-threads.ts';
import { startProcess } from '../support/processes.ts';

describe('gcFlagsFor', () => {
  it('asks for a single-threaded collector on one core only', () => {
    assert.deepEqual(gcFlagsFor(1, []), [SINGLE_THREADED_GC]);
    assert.deepEqual(gcFlagsFor(1, ['--import', 'x.mjs']), [SINGLE_THREADED_GC]);
    assert.deepEqual(gcFlagsFor(2, []), []);
    assert.deepEqual(gcFlagsFor(64, []), []);
  });

  it('leaves the choice to an operator who named it, either way', () => {
    for (const flag of [
      '--single-threaded-gc',
      '--no-single-threaded-gc',
      '--single_threaded_gc',
      '--single-threaded',
      '--no-single-threaded',
    ]) {
      assert.deepEqual(gcFlagsFor(1, [flag]), [], flag);
    }
    // A different flag that merely starts alike is not a decision.
    assert.deepEqual(gcFlagsFor(1, ['--single-threaded-gc-ish']), [SINGLE_THREADED_GC]);
  });
});

/** The command line the kernel has for a process: what V8 was started with. */
const commandLine = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);

describe('a server confined to one core', () => {
  it('relaunches itself in place with a single-threaded collector, and still serves and stops', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kennel-gc-'));
    try {
      const server = await startProcess('petstore.ts', { DATA_DIR: dir }, { prefix: ['taskset', '-c', '0'] });
      const pid = server.child.pid as number;
      // Same PID: the supervisor's process is the server (signals and exit codes reach it).
      const args = commandLine(pid);
      assert.equal(args.filter((a) => a === SINGLE_THREADED_GC).length, 1, args.join(' '));
      assert.ok(args.at(-1)?.endsWith(join('src', 'main', 'petstore.ts')), args.join(' '));
      const answer = await fetch(`${server.url}/openapi.json`);
      assert.equal(answer.status, 200);
      await answer.arrayBuffer();
      await server.stop('SIGTERM');
      assert.equal(server.child.exitCode, 0, server.output());
      assert.match(server.output(), /"msg":"shutting down"/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps the concurrent collector when the operator asks for it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kennel-gc-'));
    try {
      const server = await startProcess(
        'petstore.ts',
        { DATA_DIR: dir },
        { prefix: ['taskset', '-c', '0'], nodeArgs: ['--no-single-threaded-gc'] },
      );
      const args = commandLine(server.child.pid as number);
      assert.ok(!args.includes(SINGLE_THREADED_GC), args.join(' '));
      assert.ok(args.includes('--no-single-threaded-gc'), args.join(' '));
      await server.stop('SIGTERM');
      assert.equal(server.child.exitCode, 0, server.output());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('changes nothing for a server with two cores', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kennel-gc-'));
    try {
      const server = await startProcess(
        'petstore.ts',
        { DATA_DIR: dir },
        { prefix: ['taskset', '-c', '0,1'] },
      );
      const args = commandLine(server.child.pid as number);
      assert.ok(!args.includes(SINGLE_THREADED_GC), args.join(' '));
      await server.stop('SIGTERM');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
