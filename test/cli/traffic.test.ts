import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type CliTeam, show, startCliTeam } from '../support/cli-setup.ts';
import { liveLogRow, SHOP_DOCUMENT, seedTraffic } from '../support/traffic.ts';
import { kennelProcess } from './harness.ts';

// The CLI talks HTTP only, so one database is enough here; test/platform/traffic-api.test.ts runs both.
describe('kennel traffic and kennel logs', () => {
  let team: CliTeam;
  let kennel: CliTeam['kennel'];
  let env: Record<string, string> = {};
  let projectId = 0;

  before(async () => {
    team = await startCliTeam('sqlite', {
      projects: [{ slug: 'shop', name: 'Shop', document: SHOP_DOCUMENT }],
      prefix: 'kennel-traffic-',
    });
    ({ kennel, env } = team);
    projectId = team.projects[0]?.id ?? 0;
    await seedTraffic(team.ctx.db, projectId);
  });
  after(() => team?.close());

  it('prints the traffic by operation as a table, deprecated operations marked', async () => {
    const shown = await kennel('traffic', 'shop');
    assert.equal(shown.code, 0, show(shown));
    const lines = shown.stdout.split('\n');
    assert.match(
      lines[0] ?? '',
      /^Traffic of shop from 2026-11-21 12:00 to 2026-11-22 12:01 UTC: 11 requests, 1 error \(9\.1%\), p50 (9\.9|10\.0|10\.1) ms, p95 (49\.\d|50\.\d) ms, p99 (49\.\d|50\.\d) ms\.$/,
    );
    assert.match(lines[2] ?? '', /^Operation +Calls +Errors +Error rate +p50 +p95 +p99 +Lifecycle$/);
    assert.match(
      lines[3] ?? '',
      /^GET \/pets +6 +1 +16\.7% +(29\.\d|30\.\d) ms +(49\.\d|50\.\d) ms +(49\.\d|50\.\d) ms +-$/,
    );
    assert.match(
      lines[4] ?? '',
      /^GET \/pets\/\{petId\} +4 +0 +0\.0% +5\.0 ms +5\.0 ms +5\.0 ms +deprecated, sunset 2026-12-01$/,
    );
    assert.match(lines[5] ?? '', /^unmatched +1 +0 +0\.0% /);
  });

  it('--by caller and --by status, --since, and --json with the exact counts', async () => {
    const callers = await kennel('traffic', 'shop', '--by', 'caller');
    assert.equal(callers.code, 0, show(callers));
    assert.match(callers.stdout, /^Caller +Kind +Calls +Errors +Error rate +Last seen$/m);
    assert.match(callers.stdout, /^key:sk_liv +key +8 +0 +0\.0% +2026-11-22T11:58:30\.000Z$/m);
    assert.match(callers.stdout, /^203\.0\.113\.0\/24 +address +2 +0 +0\.0% +2026-11-22T11:59:30\.000Z$/m);
    const statuses = await kennel('traffic', 'shop', '--by', 'status', '--since', '7d', '--json');
    assert.equal(statuses.code, 0, show(statuses));
    const traffic = JSON.parse(statuses.stdout);
    assert.deepEqual(
      [
        traffic.interval,
        traffic.totals.requests,
        traffic.groups.map((g: { key: string; requests: number }) => [g.key, g.requests]),
      ],
      [
        'hour',
        21,
        [
          ['200', 15],
          ['404', 5],
          ['503', 1],
        ],
      ],
    );
    const usage = await kennel('traffic', 'shop', '--by', 'path');
    assert.equal(usage.code, 2, show(usage));
    assert.match(usage.stderr, /--by must be one of operation, caller, status \(got "path"\)/);
    const bad = await kennel('traffic', 'shop', '--since', 'yesterday');
    assert.equal(bad.code, 1, show(bad));
    assert.match(bad.stderr, /since "yesterday" is neither a duration.*\(validation_failed\)$/m);
    const stranger = await kennel('traffic', 'nope');
    assert.equal(stranger.code, 1, show(stranger));
    assert.match(stranger.stderr, /\(project_not_found\)$/m);
  });

  it('prints the last requests oldest first; --json one object per line', async () => {
    const logs = await kennel('logs', 'shop', '--limit', '3');
    assert.equal(logs.code, 0, show(logs));
    assert.deepEqual(logs.stdout.split('\n'), [
      '2026-11-22T11:59:03.000Z  GET /pets?limit=  200  3.5 ms  key:sk_liv  req-3',
      '2026-11-22T11:59:04.000Z  GET /pets?limit=  200  4.5 ms  key:sk_liv  req-4',
      '2026-11-22T11:59:05.000Z  GET /pets?limit=  200  5.5 ms  key:sk_liv  req-5',
      '',
    ]);
    const json = await kennel('logs', 'shop', '--json');
    assert.equal(json.code, 0, show(json));
    const lines = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.deepEqual(
      lines.map((l: { requestId: string; caller: string }) => [l.requestId, l.caller]),
      [1, 2, 3, 4, 5].map((n) => [`req-${n}`, 'key:sk_liv']),
    );
  });

  it('logs --follow prints requests as they are stored until Ctrl-C', async () => {
    let inserted = false;
    let interrupted = false;
    const stored = (n: number) =>
      liveLogRow(projectId, n, {
        method: 'DELETE',
        operation: 'unmatched',
        path: `/toys/${n}`,
        status: 404,
        latency_ms: 2,
        bytes_in: 0,
        bytes_out: 50,
      });
    let stdoutSeen = '';
    const following = kennelProcess(['logs', 'shop', '--follow', '--limit', '1', '--json'], {
      env,
      timeoutMs: 30_000,
      onStderr: () => {},
      onStdout: (soFar, child) => {
        stdoutSeen = soFar;
        if (!inserted && soFar.includes('req-5')) {
          inserted = true;
          void team.ctx.db
            .insertInto('request_logs')
            .values([stored(6), stored(7)])
            .execute();
        }
        if (!interrupted && soFar.includes('live-7')) {
          interrupted = true;
          child?.kill('SIGINT');
        }
      },
    });
    const done = await following;
    assert.equal(done.code, 130, show(done));
    assert.equal(done.stderr, '', 'Ctrl-C ends it without an error');
    const ids = stdoutSeen
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { requestId: string }).requestId);
    assert.deepEqual(ids, ['req-5', 'live-6', 'live-7']);
  });
});
