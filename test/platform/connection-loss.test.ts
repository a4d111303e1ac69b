import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { ManualClock } from '../../src/lib/clock.ts';
import { buildPlatformApp } from '../../src/main/platform-app.ts';
import { buildPetstoreApp, type PetstoreTables } from '../../src/petstore/index.ts';
import type { PlatformTables } from '../../src/platform/db-schema.ts';
import { openDatabase } from '../../src/storage/index.ts';
import {
  createTestStorage,
  TEST_POSTGRES_URL,
  type TestStorage,
  testDialects,
} from '../support/databases.ts';
import { type Reply as Answer, requestAs } from '../support/http.ts';
import { TEST_DEPRECATION } from '../support/petstore.ts';
import { startPlatformContext } from '../support/platform.ts';
import { type RunningProcess, startProcess, storageEnv } from '../support/processes.ts';

/** The Petstore's admin key, given rather than printed at first start. */
const ADMIN_KEY = `pk_${'c'.repeat(43)}`;
const PASSWORD = 'a long enough password';
const CUTS = 20;
/** A request that takes longer than this is a hang. */
const HANG_MS = 8_000;

/** One loopback request with the Host the test picks; rejects on a hang or a dropped connection. */
const call = (
  port: number,
  host: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
) => requestAs(port, host, path, { ...init, hangMs: HANG_MS });

/**
 * The platform (`npm start`) on PostgreSQL, under a light load, while every PostgreSQL session it
 * holds is cut (pg_terminate_backend) 20 times. Before the fix the first cut crashed the process
 * (an 'error' event on a checked-out pg client had no listener). Now: the process stays up, every
 * answer is the expected success or 503 database_unavailable with the Error body and Retry-After,
 * none hangs, and after each cut a request succeeds within 2 s.
 */
describe('npm start on PostgreSQL while its sessions are cut (postgres)', {
  skip: !testDialects().includes('postgres') && 'TEST_DATABASE excludes postgres',
}, () => {
  const applicationName = `kennel_cut_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Pool({ connectionString: TEST_POSTGRES_URL, max: 1 });
  let storage: TestStorage;
  let dataDir: string;
  let server: RunningProcess;

  before(async () => {
    storage = await createTestStorage('postgres');
    dataDir = mkdtempSync(join(tmpdir(), 'kennel-cut-'));
    const { DATABASE_URL } = storageEnv(storage.location);
    const url = new URL(DATABASE_URL as string);
    // Every session of the process (both pools and the change relay) shows under this name.
    url.searchParams.set('application_name', applicationName);
    server = await startProcess('platform.ts', {
      DATABASE_URL: url.toString(),
      DATA_DIR: dataDir,
      HTTP_PORT: '0',
      HTTPS_PORT: '0',
      PETSTORE_PORT: '0',
      KENNEL_ADMIN_PASSWORD: PASSWORD,
      PETSTORE_ADMIN_KEY: ADMIN_KEY,
      // The load comes from one address; the limiter stays on but out of the way.
      PETSTORE_RATE_LIMIT_PER_ADDRESS: '1000000',
      PETSTORE_RATE_LIMIT_PER_KEY: '1000000',
      LOG_LEVEL: 'info',
    });
  });

  after(async () => {
    await server?.stop('SIGKILL');
    await admin.end();
    await storage?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  async function cutSessions(): Promise<number> {
    const { rowCount } = await admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
      [applicationName],
    );
    return rowCount ?? 0;
  }

  it('stays up through 20 cuts; requests in between get 503 database_unavailable, never a crash or a hang', async () => {
    const edgePort = Number(new URL(server.url).port);
    const petstoreUrl = /"petstore":"(http:\/\/[^"]+)"/.exec(server.output())?.[1];
    assert.ok(petstoreUrl, server.output());
    const petstorePort = Number(new URL(petstoreUrl).port);

    const signIn = await call(edgePort, 'localhost', '/api/v1/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'admin@localhost', password: PASSWORD }),
    });
    assert.equal(signIn.status, 201, signIn.text);
    const cookie = String(signIn.headers['set-cookie']).split(';')[0] as string;

    // What the load sends: reads and writes on the Petstore (its own listener), reads on the
    // management API through the edge (the session is read from the database each time).
    const kinds = [
      { name: 'list pets', ok: 200, send: () => call(petstorePort, '127.0.0.1', '/pets') },
      {
        name: 'create category',
        ok: 201,
        send: () =>
          call(petstorePort, '127.0.0.1', '/categories', {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_KEY}` },
            body: JSON.stringify({ name: `c-${randomBytes(6).toString('hex')}` }),
          }),
      },
      {
        name: 'read project',
        ok: 200,
        send: () => call(edgePort, 'localhost', '/api/v1/projects/petstore', { headers: { cookie } }),
      },
    ] as const;
    for (const kind of kinds) {
      const answer = await kind.send();
      assert.equal(answer.status, kind.ok, `${kind.name}: ${answer.text}`);
    }

    const tally = { ok: 0, unavailable: 0 };
    const wrong: string[] = [];
    const record = (name: string, ok: number, answer: Answer) => {
      if (answer.status === ok) {
        tally.ok++;
        return;
      }
      if (answer.status === 503) {
        const body = JSON.parse(answer.text) as Record<string, unknown>;
        const problems: string[] = [];
        if (Object.keys(body).sort().join() !== 'code,message,status') problems.push('body keys');
        if (body.code !== 'database_unavailable' || body.status !== 503) problems.push('code/status');
        if (typeof body.message !== 'string' || body.message.length === 0) problems.push('message');
        if (answer.headers['retry-after'] !== '2') problems.push('Retry-After');
        if (problems.length === 0) {
          tally.unavailable++;
          return;
        }
        wrong.push(`${name}: 503 with ${problems.join(', ')}: ${answer.text}`);
        return;
      }
      wrong.push(`${name}: ${answer.status} ${answer.text.slice(0, 300)}`);
    };

    // Light load: three loops (one per kind), one request at a time each, until the cuts end.
    let loading = true;
    const loops = kinds.map(async (kind) => {
      for (let i = 0; loading && i < 5_000; i++) {
        try {
          record(kind.name, kind.ok, await kind.send());
        } catch (error) {
          wrong.push(`${kind.name}: ${(error as Error).message}`);
          if (server.child.exitCode !== null || server.child.signalCode !== null) return;
        }
        await sleep(10);
      }
    });

    const recovery: number[] = [];
    try {
      for (let cut = 1; cut <= CUTS; cut++) {
        const cutSessionsCount = await cutSessions();
        assert.ok(cutSessionsCount > 0, `cut ${cut}: the process held sessions`);
        const started = performance.now();
        // Every kind of request succeeds again within 2 s of the cut.
        for (const kind of kinds) {
          let answer: Answer | undefined;
          while (performance.now() - started < 2_000) {
            answer = await kind.send().catch((error: Error) => {
              assert.fail(`cut ${cut}: ${kind.name}: ${error.message}\n${server.output().slice(-2000)}`);
            });
            if (answer.status === kind.ok) break;
            await sleep(20);
          }
          assert.equal(
            answer?.status,
            kind.ok,
            `cut ${cut}: ${kind.name} did not succeed within 2 s: ${answer?.text}\n${server.output().slice(-3000)}`,
          );
        }
        recovery.push(performance.now() - started);
        assert.equal(server.child.exitCode, null, `cut ${cut}: the process exited\n${server.output()}`);
        await sleep(100);
      }
    } finally {
      loading = false;
      await Promise.all(loops);
    }

    assert.deepEqual(wrong, [], `answers other than success or 503 database_unavailable`);
    assert.equal(server.child.exitCode, null, 'the process is still up');
    assert.equal(server.child.signalCode, null);
    assert.doesNotMatch(server.output(), /Unhandled 'error' event|uncaughtException/);
    assert.ok(tally.ok > CUTS, `requests succeeded throughout (${tally.ok})`);
    const sorted = [...recovery].sort((a, b) => a - b);
    process.stdout.write(
      `# ${CUTS} cuts: ${tally.ok} answered, ${tally.unavailable} answered 503 database_unavailable; ` +
        `back within ${sorted[Math.floor(sorted.length / 2)]?.toFixed(0)} ms (median), ${sorted.at(-1)?.toFixed(0)} ms (worst)\n`,
    );
  });
});

/**
 * Both APIs, in process, on a PostgreSQL that refuses connections (nothing listens on port 1):
 * every operation that needs the database answers 503 database_unavailable with Retry-After and
 * the Error body, where it used to answer 500 internal_error. A database error that is not about
 * the connection stays 500.
 */
describe('the APIs while PostgreSQL refuses connections (postgres)', {
  skip: !testDialects().includes('postgres') && 'TEST_DATABASE excludes postgres',
}, () => {
  const DOWN_URL = 'postgres://root@127.0.0.1:1/test';
  const UNAVAILABLE = {
    code: 'database_unavailable',
    message:
      'The database is unavailable. Try again in 2 seconds; if this was a change, read it back first: it may or may not have been saved.',
    status: 503,
  };

  it('the Petstore: reads, authenticated writes', async () => {
    const database = openDatabase<PetstoreTables>({ kind: 'postgres', url: DOWN_URL });
    const app = buildPetstoreApp({
      database,
      clock: new ManualClock('2026-11-22T12:00:00Z'),
      deprecation: TEST_DEPRECATION,
      logger: false,
    });
    try {
      for (const request of [
        { method: 'GET' as const, url: '/pets' },
        { method: 'GET' as const, url: '/categories/1' },
        {
          method: 'POST' as const,
          url: '/categories',
          headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
          payload: JSON.stringify({ name: 'Down' }),
        },
      ]) {
        const answer = await app.inject(request);
        assert.equal(answer.statusCode, 503, `${request.method} ${request.url}: ${answer.body}`);
        assert.equal(answer.headers['retry-after'], '2');
        assert.match(String(answer.headers['content-type']), /^application\/json/);
        assert.deepEqual(answer.json(), UNAVAILABLE);
      }
    } finally {
      await app.close();
      await database.close();
    }
  });

  it('the management API: sign-in and an authenticated read', async () => {
    const p = await startPlatformContext('postgres');
    const down = openDatabase<PlatformTables>({ kind: 'postgres', url: DOWN_URL });
    const app = buildPlatformApp({ ...p.ctx, db: down.db });
    try {
      const signIn = await app.inject({
        method: 'POST',
        url: '/api/v1/session',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ email: 'admin@x.test', password: 'admin password 1' }),
      });
      const read = await app.inject({
        method: 'GET',
        url: '/api/v1/projects/petstore',
        headers: { authorization: 'Bearer knl_looked_up_in_the_database' },
      });
      for (const answer of [signIn, read]) {
        assert.equal(answer.statusCode, 503, answer.body);
        assert.equal(answer.headers['retry-after'], '2');
        assert.deepEqual(answer.json(), UNAVAILABLE);
      }
      // The same API on a database without its tables: a failure of the query, not of the
      // connection, stays a 500.
      const empty = await createTestStorage('postgres');
      const bare = openDatabase<PlatformTables>(empty.location);
      const broken = buildPlatformApp({ ...p.ctx, db: bare.db });
      try {
        const answer = await broken.inject({
          method: 'GET',
          url: '/api/v1/projects/petstore',
          headers: { authorization: 'Bearer knl_looked_up_in_the_database' },
        });
        assert.equal(answer.statusCode, 500, answer.body);
        assert.equal(answer.json().code, 'internal_error');
        assert.equal(answer.headers['retry-after'], undefined);
      } finally {
        await broken.close();
        await bare.close();
        await empty.drop();
      }
    } finally {
      await app.close();
      await down.close();
      await p.close();
    }
  });
});
