import { LatencySketch } from '../../src/lib/latency-sketch.ts';
import type { PlatformDb } from '../../src/platform/context.ts';

const ok = (description: string) => ({ responses: { '200': { description } } });
/** GET /pets/{petId} is deprecated with a sunset; POST /pets is deprecated without one. */
export const SHOP_DOCUMENT = JSON.stringify({
  openapi: '3.0.3',
  info: { title: 'Shop', version: '1.0.0' },
  paths: {
    '/pets': { get: ok('pets'), post: { ...ok('added'), deprecated: true } },
    '/pets/{petId}': {
      get: { ...ok('a pet'), deprecated: true, 'x-sunset': '2026-12-01T00:00:00Z' },
    },
  },
});

export const sketchOf = (...ms: number[]) => {
  const sketch = new LatencySketch();
  for (const value of ms) sketch.record(value);
  return sketch.toJSON();
};

/**
 * Rows as two edge nodes would have written them for `projectId` by 2026-11-22T12:00:00Z (the
 * test platforms' clock), with known sums: over the last 24 h, GET /pets 6 calls (1 error, 503;
 * latencies 10, 20, 30, 40, 50, 100 ms), GET /pets/{petId} 4 (404, 5 ms each), unmatched 1 (404);
 * 10 more GET /pets (200 ms) in an hour row of 2026-11-19; callers by day; five logged requests.
 */
export async function seedTraffic(db: PlatformDb, projectId: number): Promise<void> {
  const series = (
    node: string,
    operation: string,
    status: number,
    at: string,
    ms: number[],
    bytes = 100,
  ) => ({
    node_id: node,
    project_id: projectId,
    operation,
    status,
    requests: ms.length,
    errors: status >= 500 ? ms.length : 0,
    bytes_in: ms.length * 10,
    bytes_out: ms.length * bytes,
    latency: sketchOf(...ms),
    minute: at,
  });
  await db
    .insertInto('traffic_minutes')
    .values([
      series('node-a', 'GET /pets', 200, '2026-11-22T11:58:00.000Z', [10, 20, 30]),
      series('node-b', 'GET /pets', 200, '2026-11-22T11:58:00.000Z', [40, 50]),
      series('node-b', 'GET /pets', 503, '2026-11-22T11:59:00.000Z', [100]),
      series('node-a', 'GET /pets/{petId}', 404, '2026-11-22T11:30:00.000Z', [5, 5, 5, 5]),
      series('node-a', 'unmatched', 404, '2026-11-22T11:59:00.000Z', [1]),
      // Another project's row is never counted.
      {
        ...series('node-a', 'GET /pets', 200, '2026-11-22T11:58:00.000Z', [1]),
        project_id: projectId + 1000,
      },
    ])
    .execute();
  // Minutes older than 48 hours live on as hours.
  const { minute: _minute, ...hourly } = series('node-a', 'GET /pets', 200, '', Array(10).fill(200));
  await db
    .insertInto('traffic_hours')
    .values({ ...hourly, hour: '2026-11-19T10:00:00.000Z' })
    .execute();
  const caller = (
    node: string,
    who: string,
    operation: string,
    day: string,
    requests: number,
    last: string,
  ) => ({
    node_id: node,
    project_id: projectId,
    caller: who === 'key' ? 'a'.repeat(32) : 'b'.repeat(32),
    caller_label: who === 'key' ? 'key:sk_liv' : '203.0.113.0/24',
    caller_kind: who === 'key' ? 'key' : 'address',
    operation,
    day,
    requests,
    errors: 0,
    last_seen_at: last,
  });
  await db
    .insertInto('traffic_callers')
    .values([
      caller('node-a', 'key', 'GET /pets/{petId}', '2026-11-22', 3, '2026-11-22T11:30:10.000Z'),
      caller('node-b', 'key', 'GET /pets/{petId}', '2026-11-22', 1, '2026-11-22T11:30:40.000Z'),
      caller('node-a', 'key', 'GET /pets', '2026-11-22', 4, '2026-11-22T11:58:30.000Z'),
      caller('node-b', 'address', 'GET /pets', '2026-11-22', 2, '2026-11-22T11:59:30.000Z'),
      caller('node-b', 'address', 'GET /pets/{petId}', '2026-11-18', 7, '2026-11-18T09:00:00.000Z'),
      // Eight days ago: out of the last 7 days.
      caller('node-a', 'address', 'POST /pets', '2026-11-14', 2, '2026-11-14T09:00:00.000Z'),
    ])
    .execute();
  await db
    .insertInto('request_logs')
    .values(
      [1, 2, 3, 4, 5].map((n) => ({
        node_id: n % 2 === 0 ? 'node-b' : 'node-a',
        project_id: projectId,
        at: `2026-11-22T11:59:0${n}.000Z`,
        method: 'GET',
        operation: 'GET /pets',
        path: '/pets?limit=',
        status: 200,
        latency_ms: n + 0.5,
        bytes_in: 0,
        bytes_out: 120,
        caller_label: 'key:sk_liv',
        request_id: `req-${n}`,
      })),
    )
    .execute();
}

/**
 * A request_logs row as node-b stores a request that arrives while a test follows the log (at
 * 2026-11-22T12:00:0n, request id live-n): `request` gives what differs (method, operation, path,
 * status, latency and bytes).
 */
export const liveLogRow = (
  projectId: number,
  n: number,
  request: {
    method: string;
    operation: string;
    path: string;
    status: number;
    latency_ms: number;
    bytes_in: number;
    bytes_out: number;
  },
) => ({
  node_id: 'node-b',
  project_id: projectId,
  at: `2026-11-22T12:00:0${n}.000Z`,
  ...request,
  caller_label: '203.0.113.0/24',
  request_id: `live-${n}`,
});
