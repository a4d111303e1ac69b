/**
 * The answers of one operation matcher (./operation-matcher.ts) to the requests it saw last, by
 * method and normalised path: an API's clients ask for the same few paths over and over, and a
 * map lookup costs a small part of a match (traffic recording matches every API request).
 *
 * Bounded whatever the clients send: at most `limit` answers, all forgotten at once when it is
 * full (no order to keep per hit, and a flood of unique paths costs a lookup and an insert more
 * per request than no cache at all), and paths longer than `maxPathLength` characters are
 * neither looked up nor kept, so it holds at most `limit` × `maxPathLength` characters of keys.
 * A request that matched nothing is remembered too (`null`).
 */
export class OperationMatchCache<M> {
  readonly limit: number;
  readonly maxPathLength: number;
  /** Method → path → answer (`null`: no operation). */
  readonly #byMethod = new Map<string, Map<string, M | null>>();
  #size = 0;

  constructor(limit = 2048, maxPathLength = 128) {
    this.limit = limit;
    this.maxPathLength = maxPathLength;
  }

  /** How many answers it holds. */
  get size(): number {
    return this.#size;
  }

  /** Whether a path of this length is cached at all. */
  holds(path: string): boolean {
    return path.length <= this.maxPathLength;
  }

  /** The answer kept for `method path`: `null` for no operation, undefined when none is kept. */
  get(method: string, path: string): M | null | undefined {
    return this.#byMethod.get(method)?.get(path);
  }

  /** Keeps `answer` (call after a `get` answered undefined); forgets everything when full. */
  set(method: string, path: string, answer: M | null): void {
    if (path.length > this.maxPathLength) return;
    if (this.#size >= this.limit) {
      this.#byMethod.clear();
      this.#size = 0;
    }
    let paths = this.#byMethod.get(method);
    if (paths === undefined) {
      paths = new Map();
      this.#byMethod.set(method, paths);
    }
    if (!paths.has(path)) this.#size++;
    paths.set(path, answer);
  }
}
