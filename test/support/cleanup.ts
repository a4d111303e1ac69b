/** Something a test starts and must stop: a platform, an app, a server harness, a browser. */
export type Closable = { close(): unknown } | { stop(): unknown };

/**
 * Stops each in the order given (the reverse of how they were started), skipping those a failed
 * `before` never made: for `after` hooks (`after(() => closeAll(edge, app, p))`). The first failure
 * ends it, as a list of awaits would.
 */
export async function closeAll(...parts: (Closable | undefined)[]): Promise<void> {
  for (const part of parts) {
    if (part === undefined) continue;
    await ('close' in part ? part.close() : part.stop());
  }
}
