import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { LatencySketch } from '../../src/lib/latency-sketch.ts';

const alpha = LatencySketch.RELATIVE_ACCURACY;
/** The lower quantile the sketch promises: the value at rank ⌊q·(n − 1)⌋ of the sorted sample. */
const exactQuantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(q * (sorted.length - 1))] as number;
};
const sketchOf = (values: number[]) => {
  const sketch = new LatencySketch();
  for (const v of values) sketch.record(v);
  return sketch;
};
const latency = fc.double({ min: 0.01, max: 600_000, noNaN: true });

describe('LatencySketch', () => {
  it('answers every quantile within its stated relative accuracy of the exact one', () => {
    fc.assert(
      fc.property(
        fc.array(latency, { minLength: 1, maxLength: 2000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (values, q) => {
          const sketch = sketchOf(values);
          assert.equal(sketch.count, values.length);
          for (const at of [q, 0, 0.5, 0.95, 0.99, 1]) {
            const exact = exactQuantile(values, at);
            const estimate = sketch.quantile(at) as number;
            assert.ok(
              Math.abs(estimate - exact) <= alpha * exact * (1 + 1e-9),
              `q=${at}: ${estimate} vs ${exact}`,
            );
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('merging two sketches equals recording both samples into one', () => {
    fc.assert(
      fc.property(fc.array(latency, { maxLength: 500 }), fc.array(latency, { maxLength: 500 }), (a, b) => {
        const merged = sketchOf(a);
        merged.merge(sketchOf(b));
        const both = sketchOf([...a, ...b]);
        assert.equal(merged.count, a.length + b.length);
        for (const q of [0, 0.25, 0.5, 0.95, 0.99, 1]) assert.equal(merged.quantile(q), both.quantile(q));
        assert.deepEqual(JSON.parse(merged.toJSON()), JSON.parse(both.toJSON()));
      }),
      { numRuns: 200 },
    );
  });

  it('round-trips through JSON with the same count and quantiles', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(latency, fc.constant(0)), { maxLength: 500 }), (values) => {
        const sketch = sketchOf(values);
        const back = LatencySketch.fromJSON(sketch.toJSON());
        assert.equal(back.count, values.length);
        for (const q of [0, 0.5, 0.99, 1]) assert.equal(back.quantile(q), sketch.quantile(q));
        assert.equal(back.toJSON(), sketch.toJSON());
      }),
    );
  });

  it('is empty until something is recorded; sub-microsecond values count as 0', () => {
    const sketch = new LatencySketch();
    assert.equal(sketch.count, 0);
    assert.equal(sketch.quantile(0.5), undefined);
    assert.equal(sketch.toJSON(), '{"zero":0,"buckets":{}}');
    sketch.record(0);
    sketch.record(Number.NaN);
    assert.equal(sketch.count, 1);
    assert.equal(sketch.quantile(0.99), 0);
    assert.equal(sketch.quantile(1.5), undefined);
  });

  it('keeps at most MAX_BUCKETS buckets by collapsing the lowest, and the high quantiles stay exact to α', () => {
    const sketch = new LatencySketch();
    const values: number[] = [];
    // From 1 µs to 10^16 ms with a step of 1 % (under a bucket's width): more buckets than the cap.
    for (let v = 0.001; v < 1e16; v *= 1.01) values.push(v);
    for (const v of values) sketch.record(v);
    const buckets = Object.keys(JSON.parse(sketch.toJSON()).buckets).length;
    assert.equal(buckets, LatencySketch.MAX_BUCKETS);
    assert.equal(sketch.count, values.length);
    for (const q of [0.5, 0.95, 0.99, 1]) {
      const exact = exactQuantile(values, q);
      assert.ok(Math.abs((sketch.quantile(q) as number) - exact) <= alpha * exact * (1 + 1e-9));
    }
  });

  it('refuses JSON that is not a sketch', () => {
    assert.throws(() => LatencySketch.fromJSON('{"zero":-1,"buckets":{}}'), TypeError);
    assert.throws(() => LatencySketch.fromJSON('{"zero":0,"buckets":{"x":1}}'), TypeError);
    assert.throws(() => LatencySketch.fromJSON('{"zero":0}'), TypeError);
  });
});
