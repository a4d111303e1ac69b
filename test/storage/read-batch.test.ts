import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { batchReads, shareReads } from '../../src/storage/index.ts';

/** A load that records the keys of each query it is asked to run. */
function recordingLoad() {
  const queries: number[][] = [];
  const load = async (keys: number[]) => {
    queries.push([...keys]);
    return keys.filter((key) => key !== 404).map((key) => ({ id: key, name: `row ${key}` }));
  };
  return { queries, load };
}

describe('batchReads: reads that arrive together share one query', () => {
  it('reads asked in one turn go as one query, each caller gets its own row (or undefined)', async () => {
    const { queries, load } = recordingLoad();
    const read = batchReads(load, (row) => row.id);
    const answers = await Promise.all([read(1), read(2), read(1), read(404), read(3)]);
    assert.deepEqual(queries, [[1, 2, 404, 3]], 'one query, each key once');
    assert.deepEqual(answers, [
      { id: 1, name: 'row 1' },
      { id: 2, name: 'row 2' },
      { id: 1, name: 'row 1' },
      undefined,
      { id: 3, name: 'row 3' },
    ]);
  });

  it('a read asked once the query is sent waits for a query of its own (it must see what was written before it)', async () => {
    const { queries, load } = recordingLoad();
    const read = batchReads(load, (row) => row.id);
    const first = read(1);
    await nextTurn(); // the first batch's query is sent
    const second = read(1);
    assert.deepEqual(await Promise.all([first, second]), [
      { id: 1, name: 'row 1' },
      { id: 1, name: 'row 1' },
    ]);
    assert.deepEqual(queries, [[1], [1]]);
  });

  it('a full batch goes at once and the next reads start another', async () => {
    const { queries, load } = recordingLoad();
    const read = batchReads(load, (row) => row.id, 3);
    const answers = await Promise.all([1, 2, 3, 4, 5].map((key) => read(key)));
    assert.deepEqual(queries, [
      [1, 2, 3],
      [4, 5],
    ]);
    assert.deepEqual(
      answers.map((row) => row?.id),
      [1, 2, 3, 4, 5],
    );
  });

  it('a failed query fails every read of its batch, and only those', async () => {
    let fail = true;
    const read = batchReads(
      async (keys: number[]) => {
        if (fail) throw new Error('connection lost');
        return keys.map((id) => ({ id }));
      },
      (row) => row.id,
    );
    const failed = await Promise.allSettled([read(1), read(2)]);
    assert.deepEqual(
      failed.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : 'answered')),
      ['connection lost', 'connection lost'],
    );
    fail = false;
    assert.deepEqual(await read(1), { id: 1 });
  });
});

describe('shareReads: identical reads that arrive together share one query', () => {
  it('one query per distinct key in a turn; a later turn queries again', async () => {
    const loads: string[] = [];
    const read = shareReads(async (key: string) => {
      loads.push(key);
      return { key, at: loads.length };
    });
    const [a, b, c] = await Promise.all([read('0:20'), read('0:20'), read('20:20')]);
    assert.deepEqual(loads, ['0:20', '20:20']);
    assert.equal(a, b, 'the same result, shared');
    assert.deepEqual(c, { key: '20:20', at: 2 });
    const later = await read('0:20');
    assert.deepEqual(later, { key: '0:20', at: 3 }, 'not the earlier turn’s result');
  });

  it('a read asked after the query is sent does not join it', async () => {
    const loads: string[] = [];
    const read = shareReads(async (key: string) => {
      loads.push(key);
      return loads.length;
    });
    const first = read('page');
    await nextTurn();
    const second = read('page');
    assert.deepEqual(await Promise.all([first, second]), [1, 2]);
  });
});
