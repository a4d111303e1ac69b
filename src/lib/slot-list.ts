/**
 * What is in flight (requests, proxied exchanges), held for a periodic sweep: array slots that are
 * cleared on release and reused. Not a Map or a Set: one whose entries come and go with every
 * request is rehashed again and again, and V8 links each obsolete table to its successor (for
 * live iterators), so once one table has been promoted to the old generation every later table,
 * and what it held, survives the young-generation GC. Under load that made each scavenge copy
 * megabytes and pause the process for tens of milliseconds (docs/decisions/storage-and-dialects.md, issue 16).
 */
export class SlotList<Item extends object> {
  readonly #items: (Item | undefined)[] = [];
  readonly #free: number[] = [];
  #size = 0;

  /** Holds `item` until its slot is released; returns the slot. */
  add(item: Item): number {
    const slot = this.#free.pop() ?? this.#items.length;
    this.#items[slot] = item;
    this.#size++;
    return slot;
  }

  /** Frees a slot `add` returned. The holder releases it exactly once: a freed slot is reused. */
  release(slot: number): void {
    if (this.#items[slot] === undefined) throw new Error(`SlotList: slot ${slot} is not held`);
    this.#items[slot] = undefined;
    this.#free.push(slot);
    this.#size--;
  }

  /** Visits every item held; `visit` may release slots (its own or others). */
  forEach(visit: (item: Item) => void): void {
    const items = this.#items;
    for (let slot = 0; slot < items.length; slot++) {
      const item = items[slot];
      if (item !== undefined) visit(item);
    }
  }

  get size(): number {
    return this.#size;
  }
}
