import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createToken } from '../../src/platform/accounts/credentials.ts';
import { managementDocument } from '../../src/platform/api/app.ts';
import { startAppPlatform } from '../support/api-scenario.ts';
import { closeAll } from '../support/cleanup.ts';
import { ContractChecker } from '../support/contract.ts';
import { testDialects } from '../support/databases.ts';
import type { TestPlatform } from '../support/platform.ts';
import { seedTeamProject } from '../support/platform-config.ts';

const contract = new ContractChecker(managementDocument());
const get = (description: string) => ({ get: { responses: { '200': { description } } } });
const doc = (paths: Record<string, unknown>) =>
  JSON.stringify({ openapi: '3.0.3', info: { title: 'Shop', version: '1.0.0' }, paths });
const V1 = doc({ '/pets': get('pets'), '/pets/{petId}': get('a pet'), '/toys': get('toys') });
/** Removes GET /pets/{petId} (called) and GET /toys (never called): two breaking changes. */
const V2 = doc({ '/pets': get('pets') });

for (const dialect of testDialects()) {
  describe(`the deploy gate joined with traffic (${dialect})`, () => {
    let p: TestPlatform;
    let app: FastifyInstance;
    let token = '';

    const call = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
      const response = await app.inject({
        method,
        url,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
      contract.check(method, url, response.statusCode, response.headers['content-type'], response.body);
      return { status: response.statusCode, body: JSON.parse(response.body) };
    };
    const trafficOf = (changes: { operation?: string; level: string; traffic?: unknown }[]) =>
      Object.fromEntries(changes.filter((c) => c.level === 'breaking').map((c) => [c.operation, c.traffic]));

    before(async () => {
      // The clock reads 2026-11-22T12:00:00Z: the last 7 days are 2026-11-16 to 2026-11-22.
      ({ p, app } = await startAppPlatform(dialect));
      const { owner, project } = await seedTeamProject(p.ctx, { document: false });
      token = (await createToken(p.ctx, owner, 'tests')).token;
      assert.equal((await call('POST', '/api/v1/projects/shop/deploys', { document: V1 })).status, 201);
      const row = (node: string, caller: string, operation: string, day: string, requests: number) => ({
        node_id: node,
        project_id: project.id,
        caller: caller.padEnd(32, '0'),
        caller_label: `key:${caller}`,
        caller_kind: 'key',
        operation,
        day,
        requests,
        errors: 0,
        last_seen_at: `${day}T10:00:00.000Z`,
      });
      await p.ctx.db
        .insertInto('traffic_callers')
        .values([
          // One caller seen by two nodes the same day counts once.
          row('node-a', 'aa', 'GET /pets/{petId}', '2026-11-22', 5),
          row('node-b', 'aa', 'GET /pets/{petId}', '2026-11-22', 2),
          row('node-a', 'bb', 'GET /pets/{petId}', '2026-11-16', 4),
          row('node-b', 'cc', 'GET /pets/{petId}', '2026-11-20', 1),
          // Older than 7 days, and another operation: not counted.
          row('node-a', 'dd', 'GET /pets/{petId}', '2026-11-15', 50),
          row('node-a', 'aa', 'GET /pets', '2026-11-22', 9),
        ])
        .execute();
    });
    after(() => closeAll(app, p));

    it('refuses with the calls and callers each breaking change would hit, and says how many', async () => {
      const refused = await call('POST', '/api/v1/projects/shop/deploys', { document: V2 });
      assert.deepEqual([refused.status, refused.body.code], [409, 'breaking_changes']);
      assert.deepEqual(trafficOf(refused.body.changes), {
        'GET /pets/{petId}': { requests: 12, callers: 3 },
        'GET /toys': { requests: 0, callers: 0 },
      });
      assert.match(
        refused.body.message,
        /with 2 breaking changes: .*\. The operations they touch had 12 calls from 3 callers in the last 7 days\. Nothing changed;/,
      );
      const dry = await call('POST', '/api/v1/projects/shop/deploys', { document: V2, dryRun: true });
      assert.equal(dry.status, 200);
      assert.deepEqual(trafficOf(dry.body.changes), trafficOf(refused.body.changes));
      const forced = await call('POST', '/api/v1/projects/shop/deploys', {
        document: V2,
        allowBreaking: true,
      });
      assert.equal(forced.status, 201);
      assert.deepEqual(trafficOf(forced.body.changes), trafficOf(refused.body.changes));
      // Stored and listed changes carry no traffic: it is read when a deploy is answered.
      const [listed] = (await call('GET', '/api/v1/projects/shop/deploys')).body;
      assert.ok(listed.changes.every((c: { traffic?: unknown }) => c.traffic === undefined));
    });

    it("joins a promotion's breaking changes with the same traffic", async () => {
      const [, first] = (await call('GET', '/api/v1/projects/shop/deploys')).body;
      // Going back to V1 adds operations back: not breaking. Promoting V2 over it again is.
      const back = await call('POST', `/api/v1/projects/shop/deploys/${first.id}/promote`, {});
      assert.equal(back.status, 200);
      const [second] = (await call('GET', '/api/v1/projects/shop/deploys')).body;
      const refused = await call('POST', `/api/v1/projects/shop/deploys/${second.id}/promote`, {});
      assert.deepEqual([refused.status, refused.body.code], [409, 'breaking_changes']);
      assert.deepEqual(trafficOf(refused.body.changes)['GET /pets/{petId}'], { requests: 12, callers: 3 });
      const promoted = await call('POST', `/api/v1/projects/shop/deploys/${second.id}/promote`, {
        allowBreaking: true,
      });
      assert.equal(promoted.status, 200);
      assert.deepEqual(trafficOf(promoted.body.publication.changes)['GET /toys'], {
        requests: 0,
        callers: 0,
      });
    });
  });
}
