import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createToken } from '../../src/platform/accounts/credentials.ts';
import { createTeam } from '../../src/platform/accounts/teams.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import { bootstrapPlatform } from '../../src/platform/bootstrap.ts';
import { platformMigrations } from '../../src/platform/db-schema.ts';
import { bearerClient, type Client, statusAndBody } from '../support/api-scenario.ts';
import { testDialects } from '../support/databases.ts';
import { requestAs } from '../support/http.ts';
import { seedProject, seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';
import { startTestNode, type TestNode } from '../support/test-node.ts';

const DOC = JSON.stringify({ openapi: '3.0.3', info: { title: 'T', version: '1' }, paths: {} });

type Send = Client;

/**
 * KENNEL_ORIGIN_ALLOWLIST is the operator's: it serves the bootstrap team ("Kennel", its Petstore)
 * only. A tenant team reaches a private origin only with a grant a platform admin gives it, in the
 * management API and at the edge alike, and a revoked grant stops the forwarding at once.
 */
for (const dialect of testDialects()) {
  describe(`private origins need a platform admin's grant (${dialect})`, () => {
    let node: TestNode;
    let internal: Server;
    let internalConnections = 0;
    let internalOrigin = '';
    let teamId = 0;
    let tenant: Send;
    let admin: Send;

    const listen = (server: Server) =>
      new Promise<number>((resolve) =>
        server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
      );
    const sender = (token: string): Send => bearerClient(node.node.app, token);
    const viaEdge = async (slug: string) => {
      const answer = await requestAs(node.httpPort, `${slug}.platform.test`, '/api/inside');
      return [answer.status, answer.status === 200 ? answer.text : JSON.parse(answer.text).code];
    };

    before(async () => {
      // The operator's private service, which the operator allowlists for its own Petstore.
      internal = createServer((_req, res) => res.end('internal secret'));
      internal.on('connection', () => {
        internalConnections++;
      });
      internalOrigin = `http://127.0.0.1:${await listen(internal)}`;
      node = await startTestNode(dialect, {
        env: { KENNEL_ORIGIN_ALLOWLIST: internalOrigin },
        edge: { connectTimeoutMs: 500, responseTimeoutMs: 2000 },
      });
      const { ctx } = node;
      await bootstrapPlatform(ctx, {
        slug: 'petstore',
        name: 'Petstore',
        originUrl: internalOrigin,
        document: DOC,
      });
      const seeded = await seedTeam(ctx);
      teamId = seeded.team.id;
      // A project of the tenant's that points at the private service from before grants existed.
      await seedProject(ctx, seeded.owner, {
        teamId,
        slug: 'older',
        name: 'Older',
        originUrl: internalOrigin,
        document: DOC,
      });
      tenant = sender((await createToken(ctx, seeded.owner, 'tests')).token);
      admin = sender((await createToken(ctx, seeded.admin, 'tests')).token);
    });

    after(async () => {
      await node?.stop();
      internal?.close();
    });

    it("serves the operator's own Petstore on the allowlisted origin", async () => {
      assert.deepEqual(await viaEdge('petstore'), [200, 'internal secret']);
    });

    it("keeps a tenant off the operator's allowlisted origin, telling it to ask for a grant", async () => {
      const connectionsBefore = internalConnections;
      const refused = await tenant('POST', '/api/v1/projects', {
        teamId,
        slug: 'probe',
        name: 'Probe',
        originUrl: internalOrigin,
      });
      assert.deepEqual(statusAndBody(refused), {
        status: 422,
        body: {
          code: 'origin_not_allowed',
          message: `originUrl ${internalOrigin} points at a loopback, private or reserved address (127.0.0.1); projects may reach the platform's own network only with a grant. Use a public address, or ask a platform admin to grant team "Shop" the origin ${internalOrigin}.`,
          status: 422,
        },
      });
      assert.deepEqual(await viaEdge('older'), [502, 'origin_forbidden']);
      assert.equal(internalConnections, connectionsBefore);
    });

    it('lets only platform admins list, grant and revoke', async () => {
      for (const [method, url, body] of [
        ['GET', '/api/v1/origin-grants', undefined],
        ['POST', '/api/v1/origin-grants', { teamId, origin: internalOrigin }],
        ['DELETE', '/api/v1/origin-grants/1', undefined],
      ] as const) {
        assert.deepEqual(statusAndBody(await tenant(method, url, body)), {
          status: 403,
          body: { code: 'forbidden', message: 'Only a platform admin can do this.', status: 403 },
        });
      }
    });

    it('a grant lets the team in, in the API and at the edge; its revocation stops forwarding at once', async () => {
      const granted = await admin('POST', '/api/v1/origin-grants', {
        teamId,
        origin: `${internalOrigin.replace('127.0.0.1', '2130706433')}/`,
      });
      assert.equal(granted.status, 201, JSON.stringify(granted.body));
      assert.deepEqual(
        { ...granted.body, id: 0 },
        {
          id: 0,
          teamId,
          teamName: 'Shop',
          origin: internalOrigin,
          grantedBy: 'admin@x.test',
          createdAt: '2026-11-22T12:00:00.000Z',
        },
      );
      const listed = await admin('GET', '/api/v1/origin-grants');
      assert.deepEqual(
        listed.body.map((g) => {
          const { teamName, origin, grantedBy } = g as Record<string, unknown>;
          return [teamName, origin, grantedBy];
        }),
        [
          ['Kennel', 'KENNEL_ORIGIN_ALLOWLIST', null],
          ['Shop', internalOrigin, 'admin@x.test'],
        ],
      );
      assert.deepEqual(await viaEdge('older'), [200, 'internal secret']);
      const created = await tenant('POST', '/api/v1/projects', {
        teamId,
        slug: 'inside',
        name: 'Inside',
        originUrl: internalOrigin,
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      // Only the origin granted: the same host on another port is still refused.
      const otherPort = await tenant('POST', '/api/v1/projects', {
        teamId,
        slug: 'beside',
        name: 'Beside',
        originUrl: 'http://127.0.0.1:9464',
      });
      assert.deepEqual([otherPort.status, otherPort.body.code], [422, 'origin_not_allowed']);

      const revoked = await admin('DELETE', `/api/v1/origin-grants/${granted.body.id}`);
      assert.equal(revoked.status, 204);
      assert.deepEqual(await viaEdge('older'), [502, 'origin_forbidden']);
      const again = await tenant('POST', '/api/v1/projects/older/deploys', {
        document: DOC,
        originUrl: internalOrigin,
      });
      assert.deepEqual([again.status, again.body.code], [422, 'origin_not_allowed']);
      assert.deepEqual(statusAndBody(await admin('DELETE', `/api/v1/origin-grants/${granted.body.id}`)), {
        status: 404,
        body: {
          code: 'origin_grant_not_found',
          message: `No origin grant ${granted.body.id}: list the grants (GET /api/v1/origin-grants) for their ids.`,
          status: 404,
        },
      });
      assert.deepEqual(await viaEdge('petstore'), [200, 'internal secret']);
    });

    it('refuses a grant of what is not an origin, or for a team that does not exist', async () => {
      const notOrigin = await admin('POST', '/api/v1/origin-grants', {
        teamId,
        origin: `${internalOrigin}/api`,
      });
      assert.deepEqual(statusAndBody(notOrigin), {
        status: 400,
        body: {
          code: 'validation_failed',
          message: `"${internalOrigin}/api" is not an origin: write scheme://host:port, e.g. http://127.0.0.1:4010, or KENNEL_ORIGIN_ALLOWLIST for every origin of that setting.`,
          status: 400,
        },
      });
      const noTeam = await admin('POST', '/api/v1/origin-grants', { teamId: 999, origin: internalOrigin });
      assert.deepEqual([noTeam.status, noTeam.body.code], [404, 'team_not_found']);
    });

    it('refuses an origin URL with a user name or password', async () => {
      for (const originUrl of ['http://127.0.0.1:30010@example.com', 'https://user@api.example.com/v1']) {
        const created = await tenant('POST', '/api/v1/projects', {
          teamId,
          slug: 'userinfo',
          name: 'Userinfo',
          originUrl,
        });
        assert.deepEqual(statusAndBody(created), {
          status: 400,
          body: {
            code: 'validation_failed',
            message: `originUrl "${originUrl}" carries a user name or password (before the @): give the origin's address alone, e.g. https://api.example.com; Kennel does not send credentials to origins.`,
            status: 400,
          },
        });
        const deployed = await tenant('POST', '/api/v1/projects/older/deploys', { document: DOC, originUrl });
        assert.deepEqual([deployed.status, deployed.body.code], [400, 'validation_failed']);
      }
    });
  });
}

for (const dialect of testDialects()) {
  describe(`migration 0008_origin_grants on an existing installation (${dialect})`, () => {
    let p: TestPlatform;
    before(async () => {
      p = await startPlatformContext(dialect);
    });
    after(async () => {
      await p?.close();
    });

    it('gives KENNEL_ORIGIN_ALLOWLIST to the first team a platform admin owns, and to no other', async () => {
      const tenant = await createUser(p.ctx, { email: 'tenant@x.test', password: 'tenant password 1' });
      const operator = await createUser(p.ctx, {
        email: 'op@x.test',
        password: 'admin password 1',
        isAdmin: true,
      });
      const tenantTeam = await createTeam(p.ctx, tenant, 'First, but a tenant');
      const kennel = await createTeam(p.ctx, operator, 'Kennel');
      await createTeam(p.ctx, operator, 'Later');
      // As before the migration: no table.
      await p.ctx.db.schema.dropTable('origin_grants').execute();
      await platformMigrations['0008_origin_grants']?.up(p.ctx.db as never, p.ctx.dialect);
      const rows = await p.ctx.db
        .selectFrom('origin_grants')
        .select(['team_id', 'origin', 'granted_by'])
        .execute();
      assert.deepEqual(
        rows.map((r) => [Number(r.team_id), r.origin, r.granted_by]),
        [[kennel.id, 'KENNEL_ORIGIN_ALLOWLIST', null]],
      );
      assert.notEqual(tenantTeam.id, kennel.id);
    });
  });
}
