import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SlotList } from '../../src/lib/slot-list.ts';

/** The in-flight lists the deadline sweeps walk (the Petstore's handlers, the edge's exchanges). */
describe('SlotList', () => {
  const names = (list: SlotList<{ name: string }>) => {
    const seen: string[] = [];
    list.forEach((item) => {
      seen.push(item.name);
    });
    return seen;
  };

  it('holds what was added until it is released, and counts it', () => {
    const list = new SlotList<{ name: string }>();
    const a = list.add({ name: 'a' });
    list.add({ name: 'b' });
    const c = list.add({ name: 'c' });
    assert.equal(list.size, 3);
    list.release(a);
    assert.deepEqual(names(list), ['b', 'c']);
    list.release(c);
    assert.deepEqual(names(list), ['b']);
    assert.equal(list.size, 1);
  });

  it('reuses a released slot, so the array does not grow with the requests served', () => {
    const list = new SlotList<{ name: string }>();
    const first = list.add({ name: 'first' });
    const second = list.add({ name: 'second' });
    list.release(first);
    const third = list.add({ name: 'third' });
    assert.equal(third, first);
    assert.notEqual(third, second);
    for (let i = 0; i < 10_000; i++) list.release(list.add({ name: 'x' }));
    assert.equal(list.add({ name: 'y' }), 2, 'after 10,000 requests one at a time, the next slot is still 2');
  });

  it('a visit may release slots, its own included', () => {
    const list = new SlotList<{ name: string; slot: number }>();
    const items = ['a', 'b', 'c'].map((name) => ({ name, slot: -1 }));
    for (const item of items) item.slot = list.add(item);
    const seen: string[] = [];
    list.forEach((item) => {
      seen.push(item.name);
      list.release(item.slot);
    });
    assert.deepEqual(seen, ['a', 'b', 'c']);
    assert.equal(list.size, 0);
  });

  it('refuses to release a slot twice (it may already belong to another request)', () => {
    const list = new SlotList<object>();
    const slot = list.add({});
    list.release(slot);
    assert.throws(() => list.release(slot), /slot 0 is not held/);
  });
});
