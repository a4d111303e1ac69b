import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LatencySketch } from '../../src/lib/latency-sketch.ts';
import { rollupTraffic, trafficWriter } from '../../src/platform/traffic/index.ts';
import { testDialects } from '../support/databases.ts';
import { startPlatformContext, type TestPlatform } from '../support/platform.ts';
import { seedTeamProject } from '../support/platform-config.ts';

const sketchOf = (...ms: number[]) => {
  const sketch = new LatencySketch();
  for (const v of ms) sketch.record(v);
  return sketch.toJSON();
};

/**
 * The traffic job (issue 27) on a clock the test moves: minutes older than 48 h become hours
 * (sums added, sketches merged) and are deleted; hours and callers past retention go, and so do
 * rows of deleted projects. Two runners at once add nothing twice.
 */
for (const dialect of testDialects()) {
  describe(`traffic rollup and retention (${dialect})`, () => {
    let p: TestPlatform;
    let projectId: number;

    before(async () => {
      p = await startPlatformContext(dialect);
      projectId = (await seedTeamProject(p.ctx, { originUrl: 'https://origin.test', document: false }))
        .project.id;
    });
    after(async () => p?.close());

    const minute = (node: string, at: string, ms: number[], status = 200, project = projectId) => ({
      node_id: node,
      project_id: project,
      operation: 'GET /pets',
      status,
      minute: at,
      requests: ms.length,
      errors: status >= 500 ? ms.length : 0,
      bytes_in: ms.length,
      bytes_out: 10 * ms.length,
      latency: sketchOf(...ms),
    });

    it('rolls whole hours older than 48 h into hours, adds to an existing hour, keeps the rest', async () => {
      await p.ctx.db.deleteFrom('traffic_minutes').execute();
      await p.ctx.db.deleteFrom('traffic_hours').execute();
      // The clock: 2026-11-22T12:00Z; minutes before 2026-11-20T12:00Z are older than 48 h.
      await p.ctx.db
        .insertInto('traffic_minutes')
        .values([
          minute('a', '2026-11-20T10:05:00.000Z', [10, 20]),
          minute('a', '2026-11-20T10:59:00.000Z', [30]),
          minute('b', '2026-11-20T10:30:00.000Z', [40]),
          minute('a', '2026-11-20T10:31:00.000Z', [500], 503),
          minute('a', '2026-11-20T11:00:00.000Z', [50]),
          // Not yet 48 h old.
          minute('a', '2026-11-20T12:00:00.000Z', [60]),
          minute('a', '2026-11-22T11:59:00.000Z', [70]),
        ])
        .execute();
      await p.ctx.db
        .insertInto('traffic_hours')
        .values({ ...minute('a', '', [5]), minute: undefined, hour: '2026-11-20T10:00:00.000Z' } as never)
        .execute();
      const result = await rollupTraffic(p.ctx, 30);
      assert.equal(result.minutesRolled, 5);
      const hours = await p.ctx.db
        .selectFrom('traffic_hours')
        .selectAll()
        .orderBy('hour')
        .orderBy('node_id')
        .orderBy('status')
        .execute();
      assert.deepEqual(
        hours.map((h) => [
          h.node_id,
          h.hour,
          Number(h.status),
          Number(h.requests),
          Number(h.errors),
          Number(h.bytes_in),
          Number(h.bytes_out),
        ]),
        [
          ['a', '2026-11-20T10:00:00.000Z', 200, 4, 0, 4, 40],
          ['a', '2026-11-20T10:00:00.000Z', 503, 1, 1, 1, 10],
          ['b', '2026-11-20T10:00:00.000Z', 200, 1, 0, 1, 10],
          ['a', '2026-11-20T11:00:00.000Z', 200, 1, 0, 1, 10],
        ],
      );
      assert.equal(hours[0]?.latency, sketchOf(5, 10, 20, 30));
      const left = await p.ctx.db.selectFrom('traffic_minutes').select('minute').orderBy('minute').execute();
      assert.deepEqual(
        left.map((m) => m.minute),
        ['2026-11-20T12:00:00.000Z', '2026-11-22T11:59:00.000Z'],
      );
      // Again: nothing more to roll, nothing counted twice.
      assert.equal((await rollupTraffic(p.ctx, 30)).minutesRolled, 0);
      assert.equal(
        Number(
          (
            await p.ctx.db
              .selectFrom('traffic_hours')
              .select('requests')
              .where('node_id', '=', 'b')
              .executeTakeFirstOrThrow()
          ).requests,
        ),
        1,
      );
      // An hour later, the next hour's minutes are 48 h old too.
      p.clock.advance(3_600_000);
      assert.equal((await rollupTraffic(p.ctx, 30)).minutesRolled, 1);
      p.clock.set('2026-11-22T12:00:00Z');
    });

    it('two runners at once roll each minute once', async () => {
      await p.ctx.db.deleteFrom('traffic_minutes').execute();
      await p.ctx.db.deleteFrom('traffic_hours').execute();
      const rows = [];
      for (let m = 0; m < 60; m++)
        rows.push(minute('a', `2026-11-19T08:${String(m).padStart(2, '0')}:00.000Z`, [m + 1]));
      await p.ctx.db.insertInto('traffic_minutes').values(rows).execute();
      const [one, two] = await Promise.all([rollupTraffic(p.ctx, 30), rollupTraffic(p.ctx, 30)]);
      assert.equal(one.minutesRolled + two.minutesRolled, 60);
      const hour = await p.ctx.db.selectFrom('traffic_hours').selectAll().executeTakeFirstOrThrow();
      assert.equal(Number(hour.requests), 60);
      assert.equal(LatencySketch.fromJSON(hour.latency).count, 60);
    });

    it('the request log keeps the last N rows per project per node', async () => {
      const entry = (i: number, project = projectId) => ({
        projectId: project,
        at: `2026-11-22T11:00:00.${String(i).padStart(3, '0')}Z`,
        method: 'GET',
        operation: 'GET /pets',
        path: '/api/pets',
        status: 200,
        latencyMs: 1.5,
        bytesIn: 0,
        bytesOut: 10,
        callerLabel: '203.0.113.0/24',
        requestId: `r${i}`,
      });
      const a = trafficWriter(p.ctx.db, 'a');
      const b = trafficWriter(p.ctx.db, 'b');
      await a.writeLogs(
        [1, 2, 3, 4].map((i) => entry(i)),
        3,
      );
      await b.writeLogs(
        [5, 6].map((i) => entry(i)),
        3,
      );
      await a.writeLogs([7, 8].map((i) => entry(i)).concat(entry(9, projectId + 1)), 3);
      const rows = await p.ctx.db
        .selectFrom('request_logs')
        .select(['node_id', 'project_id', 'request_id'])
        .orderBy('id')
        .execute();
      assert.deepEqual(
        rows.map((r) => [r.node_id, Number(r.project_id) - projectId, r.request_id]),
        [
          ['a', 0, 'r4'],
          ['b', 0, 'r5'],
          ['b', 0, 'r6'],
          ['a', 0, 'r7'],
          ['a', 0, 'r8'],
          ['a', 1, 'r9'],
        ],
      );
      assert.equal(
        (await p.ctx.db.selectFrom('request_logs').select('latency_ms').executeTakeFirstOrThrow()).latency_ms,
        1.5,
      );
      await p.ctx.db.deleteFrom('request_logs').execute();
    });

    it('deletes hours and callers past retention, and rows of deleted projects', async () => {
      await p.ctx.db.deleteFrom('traffic_hours').execute();
      await p.ctx.db.deleteFrom('traffic_minutes').execute();
      const hour = (at: string, project = projectId) =>
        ({ ...minute('a', '', [1], 200, project), minute: undefined, hour: at }) as never;
      await p.ctx.db
        .insertInto('traffic_hours')
        .values([
          hour('2026-10-23T11:00:00.000Z'),
          hour('2026-10-23T12:00:00.000Z'),
          hour('2026-11-22T11:00:00.000Z', projectId + 999),
        ])
        .execute();
      const caller = (day: string) => ({
        node_id: 'a',
        project_id: projectId,
        caller: 'f'.repeat(32),
        caller_label: '203.0.113.0/24',
        caller_kind: 'address',
        operation: 'GET /pets',
        day,
        requests: 1,
        errors: 0,
        last_seen_at: `${day}T10:00:00.000Z`,
      });
      await p.ctx.db
        .insertInto('traffic_callers')
        .values([caller('2026-10-22'), caller('2026-10-23')])
        .execute();
      const result = await rollupTraffic(p.ctx, 30);
      assert.equal(result.expired, 3);
      assert.deepEqual(
        (await p.ctx.db.selectFrom('traffic_hours').select('hour').execute()).map((h) => h.hour),
        ['2026-10-23T12:00:00.000Z'],
      );
      assert.deepEqual(
        (await p.ctx.db.selectFrom('traffic_callers').select('day').execute()).map((c) => c.day),
        ['2026-10-23'],
      );
    });
  });
}
