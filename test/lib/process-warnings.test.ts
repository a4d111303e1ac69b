import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startProcess } from '../support/processes.ts';

/**
 * A process warning (a failing WAL checkpoint, say: sqlite-checkpointer.ts reports it as one)
 * reaches the service's JSON log, not only stderr. The warning is raised by a module preloaded
 * into the real entry point, as the checkpointer's would be from inside it.
 */
describe('process warnings in the JSON log', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kennel-warnings-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('the Petstore logs a warning raised after it started as a JSON line at level warn', async () => {
    const preload = join(dir, 'warn-later.mjs');
    writeFileSync(
      preload,
      "setTimeout(() => process.emitWarning(new Error('WAL checkpoint of test.db failed: disk I/O error')), 1500);\n",
    );
    const petstore = await startProcess('petstore.ts', {
      DATA_DIR: join(dir, 'data'),
      NODE_OPTIONS: `--import ${preload}`,
    });
    after(() => petstore.stop());
    const until = Date.now() + 10_000;
    const logged = () =>
      petstore
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { level: number; msg: string; err?: { message: string } })
        .find((entry) => entry.msg.startsWith('process warning'));
    while (!logged() && Date.now() < until) await new Promise((done) => setTimeout(done, 50));
    const entry = logged();
    assert.ok(entry, petstore.output());
    assert.equal(entry.level, 40);
    assert.equal(entry.msg, 'process warning: WAL checkpoint of test.db failed: disk I/O error');
    assert.equal(entry.err?.message, 'WAL checkpoint of test.db failed: disk I/O error');
  });
});
