import { createHook } from 'node:async_hooks';

/**
 * One `process.nextTick` tick object, held for the life of the process: imported first by the
 * servers' entry points (a side effect, before anything else is loaded).
 *
 * Node builds each tick object with an object literal of computed keys (`{ [async_id_symbol]: …,
 * callback, args }`). V8 keeps the hidden classes (maps) such a literal passes through only
 * weakly in its feedback, and once a recorded map has been collected it marks the slot
 * megamorphic for good: every later nextTick then defines four of its five properties in the
 * runtime. A full collection at a moment when no tick object is alive (during start-up, or any
 * idle second) collects those maps, so whether a node ran fast was a matter of luck — the
 * assembled edge lost it in most starts, the hand-wired one rarely: about 27 runtime calls and
 * 35,000 instructions more per proxied request (~15% of the edge's CPU; docs/benchmarks.md).
 * A tick object that stays alive keeps its maps, and with them the fast path.
 */
export const heldTickObject: object | undefined = holdTickObject();

function holdTickObject(): object | undefined {
  let held: object | undefined;
  // The hook is on for one nextTick only (its `init` sees the tick object), then off again.
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject') held ??= resource as object;
    },
  });
  hook.enable();
  try {
    process.nextTick(() => {});
  } finally {
    hook.disable();
  }
  return held;
}
