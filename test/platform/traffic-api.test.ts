import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { LatencySketch } from '../../src/lib/latency-sketch.ts';
import { createToken } from '../../src/platform/accounts/credentials.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import { managementDocument } from '../../src/platform/api/app.ts';
import { readDeprecatedOperations } from '../../src/platform/traffic/read-operation-lifecycle.ts';
import { startAppPlatform } from '../support/api-scenario.ts';
import { closeAll } from '../support/cleanup.ts';
import { ContractChecker } from '../support/contract.ts';
import { testDialects } from '../support/databases.ts';
import { seedProject, type TestPlatform } from '../support/platform.ts';
import { seedTeamProject } from '../support/platform-config.ts';
import { liveLogRow, SHOP_DOCUMENT, seedTraffic } from '../support/traffic.ts';

const contract = new ContractChecker(managementDocument());
const within = (actual: unknown, expected: number) =>
  assert.ok(
    typeof actual === 'number' &&
      Math.abs(actual - expected) <= expected * LatencySketch.RELATIVE_ACCURACY + 1e-9,
    `${actual} is not within ${LatencySketch.RELATIVE_ACCURACY * 100}% of ${expected}`,
  );

for (const dialect of testDialects()) {
  describe(`traffic through the management API (${dialect})`, () => {
    let p: TestPlatform;
    let app: FastifyInstance;
    let token = '';
    let strangerToken = '';
    let projectId = 0;

    const get = async (url: string, as = token) => {
      const response = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${as}` } });
      contract.check('GET', url, response.statusCode, response.headers['content-type'], response.body);
      return { status: response.statusCode, body: JSON.parse(response.body) };
    };

    before(async () => {
      // The clock reads 2026-11-22T12:00:00Z.
      ({ p, app } = await startAppPlatform(dialect));
      const { owner, project } = await seedTeamProject(p.ctx, { document: SHOP_DOCUMENT });
      projectId = project.id;
      token = (await createToken(p.ctx, owner, 'tests')).token;
      const stranger = await createUser(p.ctx, { email: 'stranger@x.test', password: 'stranger password' });
      strangerToken = (await createToken(p.ctx, stranger, 'tests')).token;

      await seedTraffic(p.ctx.db, projectId);
    });
    after(() => closeAll(app, p));

    it('sums the nodes by operation over the last 24 h, marking deprecated operations and their sunset', async () => {
      const { status, body } = await get('/api/v1/projects/shop/traffic');
      assert.equal(status, 200);
      assert.deepEqual(
        [body.from, body.to, body.interval, body.grouping],
        ['2026-11-21T12:00:00.000Z', '2026-11-22T12:01:00.000Z', 'minute', 'operation'],
      );
      assert.deepEqual([body.totals.requests, body.totals.errors], [11, 1]);
      const groups = body.groups.map((g: Record<string, unknown>) => [
        g.key,
        g.requests,
        g.errors,
        g.bytesIn,
        g.bytesOut,
        g.deprecated,
        g.sunset,
      ]);
      assert.deepEqual(groups, [
        ['GET /pets', 6, 1, 60, 600, false, null],
        ['GET /pets/{petId}', 4, 0, 40, 400, true, '2026-12-01T00:00:00.000Z'],
        ['unmatched', 1, 0, 10, 100, false, null],
      ]);
      const pets = body.groups[0];
      // The lower quantiles of 10, 20, 30, 40, 50, 100 merged across both nodes' sketches.
      within(pets.p50, 30);
      within(pets.p95, 50);
      within(pets.p99, 50);
      within(body.groups[1].p99, 5);
      assert.equal(body.series.length, 24 * 60 + 1, 'every minute from 24 h ago to the current one');
      const at = (time: string) => body.series.find((s: { at: string }) => s.at === time);
      assert.deepEqual(
        [at('2026-11-22T11:58:00.000Z').requests, at('2026-11-22T11:59:00.000Z').errors],
        [5, 1],
      );
      assert.deepEqual(at('2026-11-22T11:57:00.000Z'), {
        at: '2026-11-22T11:57:00.000Z',
        requests: 0,
        errors: 0,
        p50: null,
        p95: null,
        p99: null,
      });
      assert.equal(
        body.series.reduce((sum: number, s: { requests: number }) => sum + s.requests, 0),
        body.totals.requests,
      );
    });

    it('groups by status and by caller (label, kind, last seen), and reads hours past 48 h', async () => {
      const byStatus = (await get('/api/v1/projects/shop/traffic?by=status')).body;
      assert.deepEqual(
        byStatus.groups.map((g: { key: string; requests: number }) => [g.key, g.requests]),
        [
          ['200', 5],
          ['404', 5],
          ['503', 1],
        ],
      );
      const byCaller = (await get('/api/v1/projects/shop/traffic?by=caller&since=24h')).body;
      assert.deepEqual(
        byCaller.groups.map((g: Record<string, unknown>) => [
          g.caller,
          g.callerKind,
          g.requests,
          g.lastSeenAt,
          g.p50,
        ]),
        [
          ['key:sk_liv', 'key', 8, '2026-11-22T11:58:30.000Z', null],
          ['203.0.113.0/24', 'address', 2, '2026-11-22T11:59:30.000Z', null],
        ],
      );
      const week = (await get('/api/v1/projects/shop/traffic?since=7d')).body;
      assert.deepEqual(
        [week.interval, week.from, week.series.length],
        ['hour', '2026-11-15T12:00:00.000Z', 169],
      );
      assert.deepEqual(
        [week.totals.requests, week.groups[0].key, week.groups[0].requests],
        [21, 'GET /pets', 16],
      );
      const hour = (time: string) => week.series.find((s: { at: string }) => s.at === time)?.requests;
      assert.deepEqual([hour('2026-11-19T10:00:00.000Z'), hour('2026-11-22T11:00:00.000Z')], [10, 11]);
      within(week.groups[0].p99, 200);
      // A short range where minutes were rolled up: drawn by the minute, from the hour's row.
      const past = (
        await get('/api/v1/projects/shop/traffic?since=2026-11-19T10:00:00Z&until=2026-11-19T11:00:00Z')
      ).body;
      assert.deepEqual([past.interval, past.totals.requests, past.series[0].requests], ['minute', 10, 10]);
    });

    it('refuses a range it cannot read, and strangers get 404', async () => {
      const bad = await get('/api/v1/projects/shop/traffic?since=yesterday');
      assert.deepEqual([bad.status, bad.body.code], [400, 'validation_failed']);
      assert.match(
        bad.body.message,
        /since "yesterday" is neither a duration before now \(such as 1h, 24h, 7d, 30d\)/,
      );
      const backwards = await get('/api/v1/projects/shop/traffic?since=1h&until=2h');
      assert.deepEqual([backwards.status, backwards.body.code], [400, 'validation_failed']);
      const wrongGrouping = await get('/api/v1/projects/shop/traffic?by=path');
      assert.equal(wrongGrouping.status, 400);
      for (const url of [
        '/api/v1/projects/shop/traffic',
        '/api/v1/projects/shop/traffic/deprecations',
        '/api/v1/projects/shop/logs',
        '/api/v1/projects/shop/logs/stream',
      ]) {
        const refused = await get(url, strangerToken);
        assert.deepEqual([refused.status, refused.body.code], [404, 'project_not_found'], url);
      }
    });

    it('lists the request log newest first, a page at a time', async () => {
      const first = (await get('/api/v1/projects/shop/logs?limit=2')).body.logs;
      assert.deepEqual(
        first.map((l: { requestId: string }) => l.requestId),
        ['req-5', 'req-4'],
      );
      assert.deepEqual(first[0], {
        id: first[0].id,
        at: '2026-11-22T11:59:05.000Z',
        method: 'GET',
        operation: 'GET /pets',
        path: '/pets?limit=',
        status: 200,
        latencyMs: 5.5,
        bytesIn: 0,
        bytesOut: 120,
        caller: 'key:sk_liv',
        requestId: 'req-5',
      });
      const next = (await get(`/api/v1/projects/shop/logs?limit=10&before=${first[1].id}`)).body.logs;
      assert.deepEqual(
        next.map((l: { requestId: string }) => l.requestId),
        ['req-3', 'req-2', 'req-1'],
      );
    });

    it('answers who called each deprecated operation in the last 7 days', async () => {
      const { body } = await get('/api/v1/projects/shop/traffic/deprecations');
      assert.deepEqual(body, {
        operations: [
          {
            operation: 'GET /pets/{petId}',
            sunset: '2026-12-01T00:00:00.000Z',
            callers: [
              {
                caller: '203.0.113.0/24',
                callerKind: 'address',
                requests: 7,
                lastSeenAt: '2026-11-18T09:00:00.000Z',
              },
              {
                caller: 'key:sk_liv',
                callerKind: 'key',
                requests: 4,
                lastSeenAt: '2026-11-22T11:30:40.000Z',
              },
            ],
          },
          { operation: 'POST /pets', sunset: null, callers: [] },
        ],
      });
    });

    it('reads which operations of a big live document are deprecated in a worker thread', async () => {
      const big = JSON.parse(SHOP_DOCUMENT);
      big.info.description = 'x'.repeat(400 * 1024);
      const owner = await p.ctx.db
        .selectFrom('users')
        .select(['id', 'email'])
        .where('email', '=', 'owner@x.test')
        .executeTakeFirstOrThrow();
      const actor = { userId: Number(owner.id), email: owner.email, isAdmin: false };
      const team = await p.ctx.db
        .selectFrom('projects')
        .select('team_id')
        .where('id', '=', projectId)
        .executeTakeFirstOrThrow();
      const other = await seedProject(p.ctx, actor, {
        teamId: Number(team.team_id),
        slug: 'big',
        name: 'Big',
        originUrl: 'http://127.0.0.1:9',
        document: JSON.stringify(big),
      });
      assert.deepEqual(await readDeprecatedOperations(p.ctx.db, other.project.id), {
        'GET /pets/{petId}': { sunset: '2026-12-01T00:00:00.000Z' },
        'POST /pets': { sunset: null },
      });
    });

    it('streams new log entries as Server-Sent Events and resumes after Last-Event-ID', async () => {
      const url = await app.listen({ port: 0, host: '127.0.0.1' });
      const newest = (await get('/api/v1/projects/shop/logs?limit=1')).body.logs[0].id as number;
      const open = (headers: Record<string, string> = {}) =>
        fetch(`${url}/api/v1/projects/shop/logs/stream`, {
          headers: { authorization: `Bearer ${token}`, ...headers },
        });
      const stream = await open();
      assert.equal(stream.status, 200);
      assert.equal(stream.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      assert.equal(stream.headers.get('cache-control'), 'no-cache, no-transform');
      const events = eventsOf(stream);
      const log = (n: number) =>
        liveLogRow(projectId, n, {
          method: 'POST',
          operation: 'POST /pets',
          path: '/pets',
          status: 201,
          latency_ms: 3,
          bytes_in: 40,
          bytes_out: 60,
        });
      await p.ctx.db.insertInto('request_logs').values(log(6)).execute();
      const first = await events.next();
      assert.equal(first.id, String(newest + 1), 'the entries before the stream opened are not sent');
      assert.equal(JSON.parse(first.data).requestId, 'live-6');
      await events.close();
      await p.ctx.db.insertInto('request_logs').values(log(7)).execute();
      const resumed = eventsOf(await open({ 'last-event-id': first.id }));
      const second = await resumed.next();
      assert.deepEqual([second.id, JSON.parse(second.data).requestId], [String(newest + 2), 'live-7']);
      await resumed.close();
    });
  });
}

/** Reads `id:`/`data:` events off a text/event-stream answer. */
function eventsOf(response: Response) {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  return {
    async next(timeoutMs = 5000): Promise<{ id: string; data: string }> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const lines = block.split('\n');
          const id = lines.find((l) => l.startsWith('id: '))?.slice(4);
          const data = lines.find((l) => l.startsWith('data: '))?.slice(6);
          if (id !== undefined && data !== undefined) return { id, data };
          end = buffer.indexOf('\n\n');
        }
        if (Date.now() > deadline) throw new Error(`no event within ${timeoutMs} ms; read so far: ${buffer}`);
        const { value, done } = await reader.read();
        if (done) throw new Error('the stream ended');
        buffer += decoder.decode(value, { stream: true });
      }
    },
    close: () => reader.cancel(),
  };
}
