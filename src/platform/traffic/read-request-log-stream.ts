import type { Actor, PlatformContext, PlatformDb } from '../context.ts';
import { projectFor } from '../projects/projects.ts';
import { newestRequestLogId, readRequestLogsAfter } from './read-request-logs.ts';

/**
 * A project's request log as Server-Sent Events: every ~second the table is read for rows after
 * the last one sent (the table is where every edge node flushes, so the stream shows all nodes),
 * each sent as `id: <id>` and `data: <JSON of the RequestLog>`. A comment line every 15 s keeps
 * proxies and load balancers from closing a quiet stream. A client that reconnects sends
 * Last-Event-ID and misses nothing still in the table.
 *
 * The stream ends when the client goes, or when the server it came through stops listening (a
 * shutdown: the drain must not wait for streams that never end on their own).
 */
export interface StreamSink {
  write(text: string): boolean;
  end(): void;
  readonly destroyed: boolean;
  readonly writableNeedDrain: boolean;
  once(event: 'close', listener: () => void): unknown;
}

export interface StreamOptions {
  readonly pollMs?: number;
  readonly heartbeatMs?: number;
  /** Whether the server the request came through still listens; false ends the stream. */
  readonly listening?: () => boolean;
  /** A read that failed (the database went away): the stream keeps polling. */
  readonly onError?: (error: unknown) => void;
}

export const STREAM_POLL_MS = 1_000;
export const STREAM_HEARTBEAT_MS = 15_000;
/** How long an EventSource waits before reconnecting, sent as the stream's `retry:`. */
export const STREAM_RETRY_MS = 2_000;

/** The id to start after: Last-Event-ID (a reconnect), else `after`, else the newest now. */
export function streamStart(lastEventId: unknown, after: number | undefined, newest: number): number {
  if (typeof lastEventId === 'string' && /^(0|[1-9]\d{0,15})$/.test(lastEventId)) return Number(lastEventId);
  return after ?? newest;
}

/** Sends the project's new log rows to `sink` until it closes; resolves then. */
export function pumpRequestLogs(
  db: PlatformDb,
  projectId: number,
  startAfter: number,
  sink: StreamSink,
  options: StreamOptions = {},
): Promise<void> {
  const pollMs = options.pollMs ?? STREAM_POLL_MS;
  const heartbeatMs = options.heartbeatMs ?? STREAM_HEARTBEAT_MS;
  let after = startAfter;
  let lastWrite = Date.now();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  return new Promise<void>((resolve) => {
    const finish = () => {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      resolve();
    };
    sink.once('close', finish);
    const write = (text: string) => {
      lastWrite = Date.now();
      sink.write(text);
    };
    write(`retry: ${STREAM_RETRY_MS}\n: streaming the request log of project ${projectId}\n\n`);
    const tick = async () => {
      if (closed || sink.destroyed) return finish();
      if (options.listening && !options.listening()) {
        sink.end();
        return finish();
      }
      // A client that reads slowly is sent nothing more until it has caught up.
      if (!sink.writableNeedDrain) {
        try {
          const logs = await readRequestLogsAfter(db, projectId, after);
          if (closed) return;
          for (const log of logs) {
            write(`id: ${log.id}\ndata: ${JSON.stringify(log)}\n\n`);
            after = log.id;
          }
        } catch (error) {
          options.onError?.(error);
        }
      }
      if (Date.now() - lastWrite >= heartbeatMs) write(': keep-alive\n\n');
      if (!closed) timer = setTimeout(tick, pollMs);
    };
    timer = setTimeout(tick, 0);
  });
}

/**
 * Where a stream of the project's log starts, checked like reading the project (a stranger gets
 * project_not_found): after Last-Event-ID on a reconnect, else after `after`, else after the
 * newest entry now (only what comes next).
 */
export async function openRequestLogStream(
  ctx: PlatformContext,
  actor: Actor,
  slug: string,
  lastEventId: unknown,
  after: number | undefined,
): Promise<{ projectId: number; after: number }> {
  const project = await projectFor(ctx, actor, slug);
  const newest =
    typeof lastEventId === 'string' || after !== undefined ? 0 : await newestRequestLogId(ctx.db, project.id);
  return { projectId: project.id, after: streamStart(lastEventId, after, newest) };
}
