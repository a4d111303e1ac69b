import type { PlatformContext } from '../../platform/context.ts';
import { trafficKey, trafficWriter } from '../../platform/traffic/index.ts';
import { EdgeTraffic } from './edge-traffic.ts';
import { CallerIdentity } from './identify-caller.ts';
import { scheduleTrafficFlushes, TrafficRecorder } from './traffic-recorder.ts';

export { EdgeTraffic, queryNames, type TrafficTag } from './edge-traffic.ts';
export { CallerIdentity, credentialSources, truncateAddress } from './identify-caller.ts';
export { isErrorStatus, TrafficRecorder } from './traffic-recorder.ts';

/** How often the request log is written (the counts: TRAFFIC_FLUSH_SECONDS). */
export const REQUEST_LOG_FLUSH_MS = 1_000;
/**
 * How often a busy project's request log is written: one with more requests since its last
 * write than REQUEST_LOG_SIZE (TrafficRecorder.flushLogs).
 */
export const BUSY_REQUEST_LOG_FLUSH_MS = 5_000;

export interface StartedTraffic {
  /** Give it to the edge (`startEdge({ traffic })`). */
  readonly edge: EdgeTraffic;
  readonly recorder: TrafficRecorder;
  /** Writes everything recorded so far, now. */
  flush(): Promise<void>;
  /** Stops the timers and flushes one last time (a node's stop sequence, after draining). */
  stop(): Promise<void>;
}

/**
 * One edge node's traffic recording under the platform's settings (TRAFFIC_*, REQUEST_LOG_SIZE),
 * writing rows under `nodeId`; undefined when TRAFFIC_RECORDING is off. The caller hash key is
 * derived from the sealing keys (src/platform/traffic/traffic-key.ts).
 */
export function startTraffic(
  ctx: PlatformContext,
  options: { nodeId: string; keys: Parameters<typeof trafficKey>[0]; onError: (error: unknown) => void },
): StartedTraffic | undefined {
  const { config } = ctx;
  if (!config.trafficRecording) return undefined;
  const recorder = new TrafficRecorder({
    clock: ctx.clock,
    writer: trafficWriter(ctx.db, options.nodeId),
    limits: {
      maxCallers: config.trafficMaxCallers,
      maxOperations: config.trafficMaxOperations,
      logSize: config.requestLogSize,
    },
  });
  const schedule = scheduleTrafficFlushes(recorder, {
    flushMs: config.trafficFlushSeconds * 1000,
    logFlushMs: REQUEST_LOG_FLUSH_MS,
    busyLogFlushMs: BUSY_REQUEST_LOG_FLUSH_MS,
    onError: options.onError,
  });
  return {
    edge: new EdgeTraffic(recorder, new CallerIdentity(trafficKey(options.keys)), options.onError),
    recorder,
    flush: () => recorder.flush(),
    stop: () => schedule.stop(),
  };
}
