import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/lib/clock.ts';
import type { RateLimitDecision } from '../../src/petstore/security/rate-limiter.ts';
import {
  leaseSize,
  type SharedWindowCounts,
  SharedWindowLimiter,
  type SharedWindowOptions,
} from '../../src/petstore/security/shared-window-limiter.ts';

/**
 * The cluster policy's allowance logic on a controllable clock, with the shared count kept in
 * memory: the same contract as the PostgreSQL table (test/petstore/rate-limit-cluster.test.ts
 * runs the real one on two processes). Several limiters on one count are several nodes.
 */
class MemoryCounts implements SharedWindowCounts {
  readonly rows = new Map<string, number>();
  claims = 0;
  purges: { policy: string; before: number }[] = [];
  /** Set to make claims fail (an outage) or never answer (a hung connection). */
  mode: 'up' | 'down' | 'hung' = 'up';

  async claim(policy: string, caller: string, windowStart: number, want: number, quota: number) {
    this.claims++;
    if (this.mode === 'down')
      throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    if (this.mode === 'hung') return new Promise<never>(() => {});
    const id = `${policy}|${windowStart}|${caller}`;
    const before = this.rows.get(id) ?? 0;
    const granted = Math.max(0, Math.min(want, quota - before));
    this.rows.set(id, before + granted);
    return { granted, claimed: before + granted };
  }

  async purgeBefore(policy: string, windowStart: number) {
    this.purges.push({ policy, before: windowStart });
  }
}

/** Claims wait while the gate is closed: a slow database, under the test's control. */
class GatedCounts extends MemoryCounts {
  #gate = Promise.withResolvers<void>();
  /** Claims asked, answered or not. */
  asked = 0;
  open() {
    this.#gate.resolve();
  }
  close() {
    this.#gate = Promise.withResolvers<void>();
  }
  override async claim(policy: string, caller: string, windowStart: number, want: number, quota: number) {
    this.asked++;
    await this.#gate.promise;
    return super.claim(policy, caller, windowStart, want, quota);
  }
}

const OPTIONS: SharedWindowOptions = { name: 'key', maxLease: 5, claimTimeoutMs: 50, outageMs: 5_000 };

function node(
  counts: MemoryCounts,
  clock: ManualClock,
  quota = 100,
  options: Partial<SharedWindowOptions> = {},
) {
  return new SharedWindowLimiter({ quota, windowSeconds: 60 }, counts, clock, { ...OPTIONS, ...options });
}

describe('cluster rate limit: allowances of a shared window', () => {
  it('sizes the allowance: the lease setting, at most a twentieth of the quota, at least 1', () => {
    assert.equal(leaseSize(600, 100), 30);
    assert.equal(leaseSize(60, 100), 3);
    assert.equal(leaseSize(10, 100), 1);
    assert.equal(leaseSize(100_000_000, 100), 100);
  });

  it('two nodes sending in turn accept exactly the quota, then refuse without asking again', async () => {
    const counts = new MemoryCounts();
    const clock = new ManualClock('2026-11-22T12:00:00Z');
    const nodes = [node(counts, clock), node(counts, clock)];
    let accepted = 0;
    for (let i = 0; i < 300; i++) if ((await nodes[i % 2]?.take(7))?.allowed) accepted++;
    assert.equal(accepted, 100);
    // 100 / 5 grants; the grant that reached the quota told its node, the other node learnt it
    // from one empty claim.
    assert.equal(counts.claims, 21);
    const refused = await nodes[0]?.take(7);
    assert.deepEqual(refused, { allowed: false, remaining: 0, resetSeconds: 60 });
    assert.equal(counts.claims, 21);
  });

  it('with one node, RateLimit counts down exactly as the local policy does', async () => {
    const counts = new MemoryCounts();
    const clock = new ManualClock('2026-11-22T12:00:20Z');
    const one = node(counts, clock, 5, { maxLease: 100 });
    const seen: RateLimitDecision[] = [];
    for (let i = 0; i < 6; i++) seen.push(await one.take('10.0.0.1'));
    assert.deepEqual(
      seen.map((d) => [d.allowed, d.remaining, d.resetSeconds]),
      [
        [true, 4, 40],
        [true, 3, 40],
        [true, 2, 40],
        [true, 1, 40],
        [true, 0, 40],
        [false, 0, 40],
      ],
    );
    // The lease is 1 for a quota of 5: one claim per request; the fifth said the window is spent.
    assert.equal(counts.claims, 5);
  });

  it('decides synchronously from an allowance it holds', async () => {
    const counts = new MemoryCounts();
    const one = node(counts, new ManualClock('2026-11-22T12:00:00Z'));
    assert.ok((one.take(1) as Promise<RateLimitDecision>) instanceof Promise, 'the first request claims');
    await one.take(1);
    const held = one.take(1);
    assert.ok(!(held instanceof Promise));
    assert.deepEqual(held, { allowed: true, remaining: 97, resetSeconds: 60 });
  });

  it('leaves unused only what a node holds when a caller stops sending to it', async () => {
    const counts = new MemoryCounts();
    const clock = new ManualClock('2026-11-22T12:00:00Z');
    const [a, b] = [node(counts, clock), node(counts, clock)];
    assert.equal((await a.take(7)).allowed, true); // a holds 4 more that nobody else can use
    let accepted = 1;
    for (let i = 0; i < 200; i++) if ((await b.take(7)).allowed) accepted++;
    assert.equal(accepted, 100 - (a.lease - 1));
  });

  it('at most lease + ⌊lease/2⌋ when the node had just claimed ahead', async () => {
    const counts = new MemoryCounts();
    const clock = new ManualClock('2026-11-22T12:00:00Z');
    const [a, b] = [node(counts, clock), node(counts, clock)];
    // Lease 5: the third request leaves 2 tokens, and a claims 5 more ahead (7 held).
    for (let i = 0; i < 3; i++) assert.equal((await a.take(7)).allowed, true);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(counts.claims, 2);
    let accepted = 3;
    for (let i = 0; i < 200; i++) if ((await b.take(7)).allowed) accepted++;
    assert.equal(accepted, 100 - (a.lease + Math.floor(a.lease / 2)));
  });

  it('claims the next allowance ahead: requests are decided without waiting while tokens last', async () => {
    const counts = new GatedCounts();
    const one = node(counts, new ManualClock('2026-11-22T12:00:00Z'), 100, { claimTimeoutMs: 60_000 });
    const first = one.take(3);
    assert.ok(first instanceof Promise, 'nothing held yet: the first request waits for the claim');
    counts.open();
    assert.equal((await first).remaining, 99);
    counts.close();
    // 4 tokens left; at 2 the next claim starts, and the requests go on without waiting for it.
    const held = Array.from({ length: 4 }, () => one.take(3));
    assert.ok(
      held.every((d) => !(d instanceof Promise)),
      'decided synchronously while the claim is out',
    );
    assert.deepEqual(
      held.map((d) => (d as RateLimitDecision).remaining),
      [98, 97, 96, 95],
    );
    assert.equal(counts.asked, 2, 'one claim ahead, not one per request');
    const waiting = one.take(3);
    assert.ok(waiting instanceof Promise, 'tokens spent before the claim answered: this one waits');
    counts.open();
    assert.deepEqual(await waiting, { allowed: true, remaining: 94, resetSeconds: 60 });
    assert.equal(counts.asked, 2, 'it waited for the claim already out');
  });

  it('shares one claim among the requests that wait for it', async () => {
    const counts = new MemoryCounts();
    const one = node(counts, new ManualClock('2026-11-22T12:00:00Z'));
    const decisions = await Promise.all(Array.from({ length: 12 }, () => one.take(3)));
    assert.equal(decisions.filter((d) => d.allowed).length, 12);
    assert.equal(counts.claims, 3, '12 requests, allowances of 5');
    assert.deepEqual(
      decisions.map((d) => d.remaining).sort((x, y) => y - x),
      [99, 98, 97, 96, 95, 94, 93, 92, 91, 90, 89, 88],
    );
  });

  it('starts each window afresh and forgets windows before the previous one', async () => {
    const counts = new MemoryCounts();
    const clock = new ManualClock('2026-11-22T12:00:59Z');
    const one = node(counts, clock, 20);
    for (let i = 0; i < 20; i++) await one.take(1);
    assert.equal((await one.take(1)).allowed, false);
    clock.advance(1_000);
    assert.deepEqual(await one.take(1), { allowed: true, remaining: 19, resetSeconds: 60 });
    const start = Date.parse('2026-11-22T12:01:00Z');
    assert.deepEqual(counts.purges, [
      { policy: 'key', before: start - 120_000 },
      { policy: 'key', before: start - 60_000 },
    ]);
  });

  it('counts alone while the shared count is unreachable, says so once, and asks again later', async () => {
    const counts = new MemoryCounts();
    const clock = new ManualClock('2026-11-22T12:00:00Z');
    const outages: unknown[] = [];
    const one = node(counts, clock, 3, { onOutage: (error) => outages.push(error) });
    counts.mode = 'down';
    const during: boolean[] = [];
    for (let i = 0; i < 5; i++) during.push((await one.take(9)).allowed);
    // The local window: the quota, then 429, as on SQLite.
    assert.deepEqual(during, [true, true, true, false, false]);
    assert.equal(counts.claims, 1, 'one failed claim, then no asking during the outage');
    assert.equal(outages.length, 1);
    counts.mode = 'up';
    clock.advance(5_000);
    assert.deepEqual(await one.take(9), { allowed: true, remaining: 2, resetSeconds: 55 });
    assert.equal(counts.claims, 2);
  });

  it('decides locally when a claim does not answer in time', async () => {
    const counts = new MemoryCounts();
    const outages: unknown[] = [];
    const one = node(counts, new ManualClock('2026-11-22T12:00:00Z'), 100, {
      onOutage: (error) => outages.push(error),
    });
    counts.mode = 'hung';
    const started = performance.now();
    const decision = await one.take(4);
    assert.ok(performance.now() - started < 2_000);
    assert.deepEqual(decision, { allowed: true, remaining: 99, resetSeconds: 60 });
    assert.match(String(outages[0]), /did not answer in 50 ms/);
  });
});
