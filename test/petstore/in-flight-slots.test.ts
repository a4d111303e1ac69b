import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InFlightSlots } from '../../src/petstore/security/install-deadline.ts';

/** The deadline sweep's bookkeeping: what expires, when, and that slots are reused. */
describe('InFlightSlots', () => {
  it('hands over each expired item once, and only those past their deadline', () => {
    const slots = new InFlightSlots<{ name: string }>();
    const a = { name: 'a' };
    const b = { name: 'b' };
    const c = { name: 'c' };
    slots.add(a, 100);
    slots.add(b, 200);
    slots.add(c, 100);
    const expired: string[] = [];
    slots.expire(99, (item) => expired.push(item.name));
    assert.equal(expired.length, 0);
    slots.expire(100, (item) => expired.push(item.name));
    assert.deepEqual(expired, ['a', 'c']);
    slots.expire(150, (item) => expired.push(item.name));
    assert.deepEqual(expired, ['a', 'c'], 'an expired item is not handed over twice');
    slots.expire(250, (item) => expired.push(item.name));
    assert.deepEqual(expired, ['a', 'c', 'b']);
  });

  it('a released item never expires, and its slot is reused', () => {
    const slots = new InFlightSlots<{ name: string }>();
    const first = slots.add({ name: 'first' }, 10);
    const second = slots.add({ name: 'second' }, 10);
    slots.release(first);
    const third = slots.add({ name: 'third' }, 10);
    assert.equal(third, first, 'the freed slot is taken again');
    assert.notEqual(third, second);
    const expired: string[] = [];
    slots.expire(1_000, (item) => expired.push(item.name));
    assert.deepEqual(expired.sort(), ['second', 'third']);
  });

  it('a slot released after it expired is freed once: later items get distinct slots', () => {
    const slots = new InFlightSlots<object>();
    const held = slots.add({}, 0);
    slots.expire(1, () => {});
    slots.release(held);
    const next = [slots.add({}, 5), slots.add({}, 5), slots.add({}, 5)];
    assert.equal(new Set(next).size, 3);
    assert.ok(next.includes(held));
  });
});
