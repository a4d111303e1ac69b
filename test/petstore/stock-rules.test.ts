import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  INITIAL_STOCK_BY_STATUS,
  ORDER_REFUSALS,
  ORDER_TRANSITIONS,
  orderTransition,
  STATUS_TABLE,
  statusOf,
} from '../../src/petstore/stock-rules.ts';

describe('the status table', () => {
  const rows: [stock: number, reserved: number, status: string][] = [
    [5, 0, 'available'],
    [5, 3, 'available'],
    [1, 0, 'available'],
    [0, 2, 'pending'],
    [0, 1, 'pending'],
    [0, 0, 'sold'],
  ];
  for (const [stock, reserved, status] of rows) {
    it(`stock ${stock}, held by open orders ${reserved} → ${status}`, () => {
      assert.equal(statusOf({ stock, reserved }), status);
    });
  }
  it('has exactly one matching row for every reachable state', () => {
    for (let stock = 0; stock < 4; stock++) {
      for (let reserved = 0; reserved < 4; reserved++) {
        assert.equal(STATUS_TABLE.filter((r) => r.holds({ stock, reserved })).length, 1);
      }
    }
  });
});

describe('the order transitions', () => {
  it('placing q moves q units from stock to held', () => {
    const t = orderTransition(null, 'place');
    assert.equal(t?.to, 'open');
    assert.equal(t?.stockDelta(3), -3);
    assert.equal(t?.reservedDelta(3), 3);
  });
  it('completing an open order releases its held units without returning them', () => {
    const t = orderTransition('open', 'complete');
    assert.equal(t?.to, 'complete');
    assert.equal(t?.stockDelta(3), 0);
    assert.equal(t?.reservedDelta(3), -3);
  });
  it('cancelling an open order returns its units to stock', () => {
    const t = orderTransition('open', 'cancel');
    assert.equal(t?.to, 'cancelled');
    assert.equal(t?.stockDelta(3), 3);
    assert.equal(t?.reservedDelta(3), -3);
  });
  it('refuses completing or cancelling a complete order', () => {
    assert.equal(orderTransition('complete', 'complete'), undefined);
    assert.equal(orderTransition('complete', 'cancel'), undefined);
    assert.equal(ORDER_REFUSALS.complete, 'order_already_complete');
  });
  it('keeps stock + held + shipped constant through every transition', () => {
    for (const t of ORDER_TRANSITIONS) {
      const shipped = t.event === 'complete' ? 2 : 0;
      assert.equal(t.stockDelta(2) + t.reservedDelta(2) + shipped, 0, `${t.event} from ${t.from}`);
    }
  });
  it('gives a new pet one unit when available, none when sold, and refuses pending', () => {
    assert.deepEqual(INITIAL_STOCK_BY_STATUS, { available: 1, sold: 0, pending: null });
  });
});
