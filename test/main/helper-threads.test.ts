import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { helperThreadFlags, ONE_HELPER_THREAD, relaunchForCores } from '../../src/main/helper-threads.ts';
import { type StartOptions, startProcess } from '../support/processes.ts';

describe('helperThreadFlags', () => {
  it('asks for one helper thread on one core only', () => {
    assert.deepEqual(helperThreadFlags(1, []), [ONE_HELPER_THREAD]);
    assert.deepEqual(helperThreadFlags(1, ['--import', 'x.mjs']), [ONE_HELPER_THREAD]);
    assert.deepEqual(helperThreadFlags(2, []), []);
    assert.deepEqual(helperThreadFlags(64, []), []);
  });

  it('leaves the choice to an operator who made it', () => {
    for (const flag of [
      '--v8-pool-size=4',
      '--v8_pool_size=2',
      '--single-threaded-gc',
      '--no-single-threaded-gc',
      '--single_threaded_gc',
      '--single-threaded',
    ]) {
      assert.deepEqual(helperThreadFlags(1, [flag]), [], flag);
    }
    // A different flag that merely starts alike is not a choice.
    assert.deepEqual(helperThreadFlags(1, ['--v8-pool-sizes=4']), [ONE_HELPER_THREAD]);
  });
});

describe('relaunchForCores', () => {
  it('starts the server as it is, with a warning, when the relaunch fails', (t) => {
    const warnings = t.mock.method(process, 'emitWarning', () => {});
    const calls: string[][] = [];
    const failing = ((_file: string, args: readonly string[] = []) => {
      calls.push([...args]);
      throw Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
    }) as typeof process.execve;
    relaunchForCores({ cores: 1, startFlags: [], execve: failing });
    assert.equal(calls.length, 1);
    assert.ok(calls[0]?.includes(ONE_HELPER_THREAD), calls[0]?.join(' '));
    assert.equal(warnings.mock.callCount(), 1);
    const [message, options] = warnings.mock.calls[0]?.arguments ?? [];
    assert.match(String(message), /EACCES: permission denied\); starting without it$/);
    assert.deepEqual(options, { code: 'KENNEL_RELAUNCH_FAILED' });
  });

  it('does nothing with more than one core', () => {
    let called = false;
    const spy = (() => {
      called = true;
    }) as unknown as typeof process.execve;
    relaunchForCores({ cores: Math.max(2, availableParallelism()), startFlags: [], execve: spy });
    assert.equal(called, false);
  });
});

/** The command line the kernel has for a process: what Node was started with. */
const commandLine = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);

/** The Petstore started with `options` on an empty data directory; its command line, then stopped. */
async function startedCommandLine(
  options: StartOptions,
  env: Record<string, string> = {},
): Promise<{ args: string[]; exitCode: number | null; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'kennel-threads-'));
  try {
    const server = await startProcess('petstore.ts', { DATA_DIR: dir, ...env }, options);
    // The PID spawn returned: a relaunch replaced the process image, not the process.
    const args = commandLine(server.child.pid as number);
    const answer = await fetch(`${server.url}/openapi.json`);
    assert.equal(answer.status, 200);
    await answer.arrayBuffer();
    await server.stop('SIGTERM');
    return { args, exitCode: server.child.exitCode, output: server.output() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('a server confined to one core', () => {
  it('relaunches itself in place with one helper thread, and still serves and stops', async () => {
    const { args, exitCode, output } = await startedCommandLine({ prefix: ['taskset', '-c', '0'] });
    assert.equal(args.filter((a) => a === ONE_HELPER_THREAD).length, 1, args.join(' '));
    assert.ok(args.at(-1)?.endsWith(join('src', 'main', 'petstore.ts')), args.join(' '));
    assert.equal(exitCode, 0, output);
    assert.match(output, /"msg":"shutting down"/);
  });

  it("keeps the operator's choice, on the command line or in NODE_OPTIONS", async () => {
    const chosen = await startedCommandLine({
      prefix: ['taskset', '-c', '0'],
      nodeArgs: ['--v8-pool-size=2'],
    });
    assert.ok(!chosen.args.includes(ONE_HELPER_THREAD), chosen.args.join(' '));
    assert.ok(chosen.args.includes('--v8-pool-size=2'), chosen.args.join(' '));
    const fromEnvironment = await startedCommandLine(
      { prefix: ['taskset', '-c', '0'] },
      { NODE_OPTIONS: '--v8-pool-size=3' },
    );
    assert.ok(!fromEnvironment.args.includes(ONE_HELPER_THREAD), fromEnvironment.args.join(' '));
  });

  it('changes nothing for a server with two cores', async () => {
    const { args } = await startedCommandLine({ prefix: ['taskset', '-c', '0,1'] });
    assert.ok(!args.includes(ONE_HELPER_THREAD), args.join(' '));
  });
});
