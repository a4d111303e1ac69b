import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { originGuard } from '../../src/edge/index.ts';
import type { PlatformTables } from '../../src/platform/db-schema.ts';
import { type Database, openDatabase } from '../../src/storage/index.ts';
import { closeAll } from '../support/cleanup.ts';
import { type HttpEdge, startHttpEdge } from '../support/edge.ts';
import { requestAs } from '../support/http.ts';
import { startPlatformContext, type TestPlatform } from '../support/platform.ts';

/**
 * The edge without its database (PostgreSQL restarting, a failover): requests it cannot route get
 * 503 `database_unavailable` with Retry-After, not a 502 blaming the project's origin.
 */
describe('the edge while PostgreSQL is unreachable', () => {
  let p: TestPlatform;
  let unreachable: Database<PlatformTables>;
  let edge: HttpEdge;

  before(async () => {
    p = await startPlatformContext('sqlite');
    // Nothing listens on port 1: every query fails as a lost connection does.
    unreachable = openDatabase<PlatformTables>({ kind: 'postgres', url: 'postgres://root@127.0.0.1:1/test' });
    const ctx = { ...p.ctx, db: unreachable.db, dialect: unreachable.dialect };
    edge = await startHttpEdge(ctx, {
      guard: originGuard({ allowlist: [] }),
      connectTimeoutMs: 500,
      responseTimeoutMs: 1000,
    });
  });

  after(() => closeAll(edge, unreachable, p));

  it('answers 503 database_unavailable with Retry-After for a project host', async () => {
    const answer = await requestAs(edge.port, 'shop.platform.test', '/api/pets');
    assert.equal(answer.status, 503);
    assert.equal(answer.headers['retry-after'], '2');
    assert.deepEqual(JSON.parse(answer.text), {
      code: 'database_unavailable',
      message: 'The platform lost its database for a moment. Try again in a few seconds.',
      status: 503,
    });
  });
});
