/**
 * The parts of a running node, each started with its stop registered beside it (Caddy's cleanup,
 * PocketBase's `NewBaseApp`): `stop()` stops them in the reverse order of their start, one at a
 * time, each awaited. A part whose stop fails is reported to `onStopError` and the others are
 * still stopped; `stop()` then rejects with every failure. A start that fails stops the parts
 * already started before its error is thrown. `stop()` runs once: later calls get the same promise.
 */
export class Parts {
  readonly #started: { name: string; stop: () => unknown }[] = [];
  readonly #onStopError: (name: string, error: unknown) => void;
  #stopping: Promise<void> | undefined;

  constructor(options: { onStopError: (name: string, error: unknown) => void }) {
    this.#onStopError = options.onStopError;
  }

  /** Starts one part and registers its stop (none: nothing to stop); returns what start returned. */
  async add<T>(name: string, start: () => T | Promise<T>, stop?: (part: T) => unknown): Promise<T> {
    if (this.#stopping) throw new Error(`cannot start ${name}: the node is stopping`);
    let part: T;
    try {
      part = await start();
    } catch (error) {
      await this.stop().catch(() => {});
      throw error;
    }
    if (stop) this.#started.push({ name, stop: () => stop(part) });
    return part;
  }

  /** The names of the parts to stop, in the order they will be stopped. */
  get stopOrder(): string[] {
    return this.#started.map((p) => p.name).reverse();
  }

  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      const failed: unknown[] = [];
      for (const part of [...this.#started].reverse()) {
        try {
          await part.stop();
        } catch (error) {
          failed.push(error);
          this.#onStopError(part.name, error);
        }
      }
      if (failed.length > 0) throw new AggregateError(failed, `${failed.length} part(s) failed to stop`);
    })();
    return this.#stopping;
  }
}
