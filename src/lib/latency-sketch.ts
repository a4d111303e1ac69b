/**
 * A latency distribution small enough to keep one per series and mergeable across nodes and
 * minutes: a DDSketch (Masson, Rim, Lee, VLDB 2019) with logarithmic buckets. Every value lands
 * in bucket `ceil(log_γ(ms))` with γ = (1 + α) / (1 − α); a bucket answers with the one value
 * that is within α of everything it holds, so any quantile is within the relative accuracy α of
 * the true one (the lower quantile: the value at rank ⌊q·(n − 1)⌋ of the sorted sample).
 *
 * Merging adds counts bucket by bucket, so sketches recorded apart and merged are exactly the
 * sketch of all the values (what lets readers sum rows across nodes and roll minutes into
 * hours). The bucket count is bounded (MAX_BUCKETS): past it the lowest buckets are collapsed
 * into one, which costs accuracy only at the fast end, never at p50/p95/p99 of real traffic.
 * Values below MIN_MS (a microsecond) count in a zero bucket and answer 0.
 */
export class LatencySketch {
  static readonly RELATIVE_ACCURACY = 0.01;
  static readonly MAX_BUCKETS = 2048;
  static readonly MIN_MS = 0.001;

  private static readonly gamma =
    (1 + LatencySketch.RELATIVE_ACCURACY) / (1 - LatencySketch.RELATIVE_ACCURACY);
  private static readonly inverseLogGamma = 1 / Math.log(LatencySketch.gamma);

  private readonly buckets = new Map<number, number>();
  private zeroCount = 0;
  private total = 0;

  get count(): number {
    return this.total;
  }

  record(ms: number): void {
    if (!Number.isFinite(ms)) return;
    this.total += 1;
    if (ms < LatencySketch.MIN_MS) {
      this.zeroCount += 1;
      return;
    }
    const index = Math.ceil(Math.log(ms) * LatencySketch.inverseLogGamma);
    const held = this.buckets.get(index);
    if (held === undefined) {
      this.buckets.set(index, 1);
      if (this.buckets.size > LatencySketch.MAX_BUCKETS) this.collapseLowest();
    } else {
      this.buckets.set(index, held + 1);
    }
  }

  merge(other: LatencySketch): void {
    this.total += other.total;
    this.zeroCount += other.zeroCount;
    for (const [index, n] of other.buckets) this.buckets.set(index, (this.buckets.get(index) ?? 0) + n);
    if (this.buckets.size > LatencySketch.MAX_BUCKETS) this.collapseLowest();
  }

  /** The q-quantile (0 ≤ q ≤ 1) in ms, within RELATIVE_ACCURACY; undefined when nothing was recorded. */
  quantile(q: number): number | undefined {
    if (this.total === 0 || !(q >= 0 && q <= 1)) return undefined;
    const rank = Math.floor(q * (this.total - 1));
    let seen = this.zeroCount;
    if (seen > rank) return 0;
    const indices = [...this.buckets.keys()].sort((a, b) => a - b);
    for (const index of indices) {
      seen += this.buckets.get(index) ?? 0;
      if (seen > rank) return LatencySketch.valueOf(index);
    }
    return LatencySketch.valueOf(indices[indices.length - 1] ?? 0);
  }

  /** `{"zero":n,"buckets":{"index":count,…}}`; the accuracy is fixed by the class, so not stored. */
  toJSON(): string {
    const buckets: Record<string, number> = {};
    for (const [index, n] of this.buckets) buckets[index] = n;
    return JSON.stringify({ zero: this.zeroCount, buckets });
  }

  static fromJSON(text: string): LatencySketch {
    const parsed = JSON.parse(text) as { zero?: unknown; buckets?: unknown };
    const sketch = new LatencySketch();
    const zero = parsed.zero;
    if (typeof zero !== 'number' || !Number.isSafeInteger(zero) || zero < 0) {
      throw new TypeError('latency sketch: "zero" must be a non-negative integer');
    }
    if (typeof parsed.buckets !== 'object' || parsed.buckets === null) {
      throw new TypeError('latency sketch: "buckets" must be an object of index → count');
    }
    sketch.zeroCount = zero;
    sketch.total = zero;
    for (const [key, n] of Object.entries(parsed.buckets)) {
      const index = Number(key);
      if (!Number.isSafeInteger(index) || typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
        throw new TypeError(
          `latency sketch: bucket ${key} must be an integer index with a non-negative count`,
        );
      }
      if (n === 0) continue;
      sketch.buckets.set(index, n);
      sketch.total += n;
    }
    if (sketch.buckets.size > LatencySketch.MAX_BUCKETS) sketch.collapseLowest();
    return sketch;
  }

  private static valueOf(index: number): number {
    // The point within α of both ends of the bucket (γ^(i−1), γ^i].
    return (2 * LatencySketch.gamma ** index) / (LatencySketch.gamma + 1);
  }

  private collapseLowest(): void {
    const indices = [...this.buckets.keys()].sort((a, b) => a - b);
    const excess = indices.length - LatencySketch.MAX_BUCKETS;
    if (excess <= 0) return;
    const into = indices[excess] as number;
    let moved = 0;
    for (let i = 0; i < excess; i++) {
      const index = indices[i] as number;
      moved += this.buckets.get(index) ?? 0;
      this.buckets.delete(index);
    }
    this.buckets.set(into, (this.buckets.get(into) ?? 0) + moved);
  }
}
