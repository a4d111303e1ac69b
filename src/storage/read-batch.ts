/**
 * Reads that arrive in the same turn of the event loop are loaded together (the DataLoader
 * pattern): each caller's key joins a pending batch, and once the turn's I/O callbacks have run
 * (setImmediate) the batch is loaded at once, by `load` (see readById in prepared.ts). On PostgreSQL
 * a point read costs a round trip, a write to the server's socket and a wake-up of its backend,
 * far more than the row: one query then serves many requests. On SQLite, where a read is a
 * synchronous call, the gain is in answering the turn's requests together (docs/benchmarks.md).
 *
 * A batch is only ever joined before its query is sent, so every caller's read starts after the
 * caller asked: an answer never predates a write acknowledged before the request arrived.
 */
export function batchReads<Key, Row>(
  load: (keys: Key[]) => Promise<readonly Row[]>,
  keyOf: (row: Row) => Key,
  maxBatch = 100,
): (key: Key) => Promise<Row | undefined> {
  type Waiter = { resolve: (row: Row | undefined) => void; reject: (error: unknown) => void };
  let pending: Map<Key, Waiter[]> | undefined;

  const flush = (batch: Map<Key, Waiter[]>) => {
    if (pending === batch) pending = undefined;
    load([...batch.keys()]).then(
      (rows) => {
        const byKey = new Map<Key, Row>();
        for (const row of rows) byKey.set(keyOf(row), row);
        for (const [key, waiters] of batch) {
          const row = byKey.get(key);
          for (const waiter of waiters) waiter.resolve(row);
        }
      },
      (error: unknown) => {
        for (const waiters of batch.values()) for (const waiter of waiters) waiter.reject(error);
      },
    );
  };

  return (key) =>
    new Promise<Row | undefined>((resolve, reject) => {
      let batch = pending;
      if (batch === undefined) {
        const fresh = new Map<Key, Waiter[]>();
        pending = batch = fresh;
        setImmediate(() => {
          if (pending === fresh) flush(fresh);
        });
      }
      const waiters = batch.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else batch.set(key, [{ resolve, reject }]);
      // A full batch goes at once; the next caller starts another.
      if (batch.size >= maxBatch) flush(batch);
    });
}

/**
 * Identical reads that arrive in the same turn of the event loop share one query: the first
 * caller's key starts a pending read, run once the turn's I/O callbacks have run; callers with
 * the same key until then get its result. As with batchReads, no caller joins a query already
 * sent. Callers share the result: they must not change it.
 */
export function shareReads<Key, Result>(load: (key: Key) => Promise<Result>): (key: Key) => Promise<Result> {
  let pending: Map<Key, PromiseWithResolvers<Result>> | undefined;
  const flush = (batch: Map<Key, PromiseWithResolvers<Result>>) => {
    if (pending === batch) pending = undefined;
    for (const [key, read] of batch) load(key).then(read.resolve, read.reject);
  };
  return (key) => {
    let batch = pending;
    if (batch === undefined) {
      const fresh = new Map<Key, PromiseWithResolvers<Result>>();
      pending = batch = fresh;
      setImmediate(() => flush(fresh));
    }
    let read = batch.get(key);
    if (read === undefined) {
      read = Promise.withResolvers<Result>();
      batch.set(key, read);
    }
    return read.promise;
  };
}

/** A batch loader from a one-key read, run for each key back to back (for SQLite's synchronous reads). */
export function eachKey<Key, Result>(
  one: (key: Key) => Promise<readonly Result[]>,
): (keys: Key[]) => Promise<Result[]> {
  return (keys) => Promise.all(keys.map((key) => one(key))).then((results) => results.flat());
}
