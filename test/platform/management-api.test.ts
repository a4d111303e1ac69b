import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { FastifyInstance } from 'fastify';
import { createUser } from '../../src/platform/accounts/users.ts';
import { buildManagementApp, managementDocument } from '../../src/platform/api/app.ts';
import { ContractChecker } from '../support/contract.ts';
import { testDialects } from '../support/databases.ts';
import { startDns, type TestDns } from '../support/dns.ts';
import { startPlatformContext, type TestPlatform } from '../support/platform.ts';

const DOC = JSON.stringify({ openapi: '3.0.3', info: { title: 'T', version: '1' }, paths: {} });
const contract = new ContractChecker(managementDocument());
/** The operations a caller without an account may use: their token or password is the proof. */
const PUBLIC = new Set(['signIn', 'acceptInvitation', 'signUp', 'getSignUpPolicy', 'resetPassword']);

interface Answer {
  status: number;
  headers: Record<string, unknown>;
  body: Record<string, unknown> & unknown[];
  text: string;
}

function client(app: FastifyInstance, auth: Record<string, string>) {
  return async (method: string, url: string, body?: unknown): Promise<Answer> => {
    const response = await app.inject({
      method: method as 'GET',
      url,
      headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    contract.check(
      method,
      url,
      response.statusCode,
      response.headers['content-type'] as string | undefined,
      response.body,
    );
    return {
      status: response.statusCode,
      headers: response.headers,
      text: response.body,
      body: (response.body ? JSON.parse(response.body) : undefined) as Answer['body'],
    };
  };
}

describe('the management API document', () => {
  it('is a valid OpenAPI 3.0.3 document declaring security on every private operation', async () => {
    const document = managementDocument();
    const result = await new Validator().validate(document);
    assert.equal(result.valid, true, JSON.stringify(result.errors));
    const paths = document.paths as Record<
      string,
      Record<string, { security?: unknown[]; operationId: string }>
    >;
    for (const item of Object.values(paths)) {
      for (const op of Object.values(item)) {
        assert.ok(Array.isArray(op.security), `${op.operationId} declares no security`);
        assert.equal(op.security.length === 0, PUBLIC.has(op.operationId), op.operationId);
      }
    }
  });
});

for (const dialect of testDialects()) {
  describe(`the management API (${dialect})`, () => {
    let dns: TestDns;
    let p: TestPlatform;
    let app: FastifyInstance;
    let owner: ReturnType<typeof client>;
    let outsider: ReturnType<typeof client>;
    const ids = { teamId: 0, deployId: 0, tokenId: 0 };

    before(async () => {
      dns = await startDns({ zones: ['example.test', 'platform.test'] });
      await dns.setRecords('platform.test', [{ name: 'petstore', type: 'A', value: '127.0.0.1' }]);
      await dns.setRecords('example.test', [
        { name: 'shop', type: 'CNAME', value: 'petstore.platform.test' },
      ]);
      p = await startPlatformContext(dialect, {
        DNS_SERVERS: dns.servers.join(','),
        // The Petstore's origin, as `npm start` allows it: for the bootstrap team only, so the
        // tenant team below gets a platform admin's grant for it.
        KENNEL_ORIGIN_ALLOWLIST: 'http://127.0.0.1:4010',
      });
      app = buildManagementApp(p.ctx);
      await app.ready();
      await createUser(p.ctx, { email: 'admin@x.test', password: 'admin password 1', isAdmin: true });
      await createUser(p.ctx, { email: 'owner@x.test', password: 'owner password 1' });
      await createUser(p.ctx, { email: 'outsider@x.test', password: 'outsider password' });
    });
    after(async () => {
      await app?.close();
      await p?.close();
      await dns?.stop();
    });

    async function tokenFor(email: string, password: string): Promise<string> {
      const anonymous = client(app, {});
      const signIn = await anonymous('POST', '/api/v1/session', { email, password });
      assert.equal(signIn.status, 201);
      const cookie = String(signIn.headers['set-cookie']).split(';')[0] ?? '';
      const viaCookie = client(app, { cookie, 'x-csrf-token': String(signIn.body.csrfToken) });
      const created = await viaCookie('POST', '/api/v1/tokens', { name: 'tests' });
      assert.equal(created.status, 201);
      return String(created.body.token);
    }

    it('signs in with a session cookie (HttpOnly, SameSite) and refuses changes without the CSRF token', async () => {
      const anonymous = client(app, {});
      const wrong = await anonymous('POST', '/api/v1/session', { email: 'owner@x.test', password: 'nope' });
      assert.equal(wrong.status, 401);
      assert.equal(wrong.body.code, 'invalid_credentials');
      const signIn = await anonymous('POST', '/api/v1/session', {
        email: 'owner@x.test',
        password: 'owner password 1',
      });
      const setCookie = String(signIn.headers['set-cookie']);
      assert.match(setCookie, /^kennel_session=kss_[\w-]+; Path=\/; Expires=.+; HttpOnly; SameSite=Strict$/);
      const cookie = setCookie.split(';')[0] ?? '';
      const noCsrf = await client(app, { cookie })('POST', '/api/v1/teams', { name: 'Nope' });
      assert.equal(noCsrf.status, 403);
      assert.equal(noCsrf.body.code, 'csrf_failed');
      const me = await client(app, { cookie })('GET', '/api/v1/me');
      // The cookie's own CSRF token, so a reloaded dashboard page can keep making changes.
      assert.deepEqual(me.body, { email: 'owner@x.test', isAdmin: false, csrfToken: signIn.body.csrfToken });
      const none = await anonymous('GET', '/api/v1/projects');
      assert.equal(none.status, 401);
      assert.equal(none.headers['www-authenticate'], 'Bearer realm="kennel"');
    });

    it('walks a project from creation to a verified domain with an API token', async () => {
      owner = client(app, { authorization: `Bearer ${await tokenFor('owner@x.test', 'owner password 1')}` });
      const admin = client(app, {
        authorization: `Bearer ${await tokenFor('admin@x.test', 'admin password 1')}`,
      });
      outsider = client(app, {
        authorization: `Bearer ${await tokenFor('outsider@x.test', 'outsider password')}`,
      });
      const team = await owner('POST', '/api/v1/teams', { name: 'Shop' });
      ids.teamId = Number(team.body.id);
      const forbidden = await owner('PUT', `/api/v1/teams/${ids.teamId}/plan`, { plan: 'pro' });
      assert.equal(forbidden.status, 403);
      assert.equal(
        (await admin('PUT', `/api/v1/teams/${ids.teamId}/plan`, { plan: 'pro' })).body.plan,
        'pro',
      );
      const grant = await admin('POST', '/api/v1/origin-grants', {
        teamId: ids.teamId,
        origin: 'http://127.0.0.1:4010',
      });
      assert.equal(grant.status, 201);
      const project = await owner('POST', '/api/v1/projects', {
        teamId: ids.teamId,
        slug: 'petstore',
        name: 'Petstore',
        originUrl: 'http://127.0.0.1:4010',
      });
      assert.equal(project.status, 201);
      assert.equal(project.body.defaultHost, 'petstore.platform.test');
      const noDeploy = await owner('POST', '/api/v1/projects/petstore/domains', {
        hostname: 'shop.example.test',
      });
      assert.equal(noDeploy.body.code, 'deploy_required');
      const deploy = await owner('POST', '/api/v1/projects/petstore/deploys', { document: DOC });
      ids.deployId = Number(deploy.body.id);
      const added = await owner('POST', '/api/v1/projects/petstore/domains', {
        hostname: 'shop.example.test',
      });
      assert.equal(added.status, 201);
      assert.equal((added.body.dns as { check: { reason: string } }).check.reason, 'verified');
      const verified = await owner('POST', '/api/v1/projects/petstore/domains/shop.example.test/verify');
      assert.equal((verified.body.domain as { state: string }).state, 'verified');
      const exported = await owner('GET', '/api/v1/projects/petstore/domain-config');
      assert.match(String(exported.body.yaml), /names:\n {4}- shop\.example\.test/);
      // The same configuration as values, for the dashboard's form.
      assert.deepEqual([exported.body.primary, exported.body.redirects], [null, []]);
      const tokens = await owner('GET', '/api/v1/tokens');
      ids.tokenId = Number((tokens.body as unknown as { id: number }[])[0]?.id);
    });

    /**
     * Every operation of the document, called by a signed-in member of another team against the
     * owner's resources: each answer is 403 or 404, or concerns the outsider's own things, and
     * none carries the owner's data. A new operation without a row here fails the test.
     */
    it('keeps every route to its team: an outsider gets 404 or 403 and learns nothing', async () => {
      const ownerData = ['petstore', 'shop.example.test', 'Shop', 'owner@x.test'];
      const rows: Record<string, { method: string; url: string; body?: unknown; expect: number[] }> = {
        signIn: {
          method: 'POST',
          url: '/api/v1/session',
          body: { email: 'owner@x.test', password: 'guess' },
          expect: [401],
        },
        signOut: { method: 'DELETE', url: '/api/v1/session', expect: [204] },
        getMe: { method: 'GET', url: '/api/v1/me', expect: [200] },
        listTokens: { method: 'GET', url: '/api/v1/tokens', expect: [200] },
        createToken: { method: 'POST', url: '/api/v1/tokens', body: { name: 'mine' }, expect: [201] },
        revokeToken: { method: 'DELETE', url: `/api/v1/tokens/${ids.tokenId}`, expect: [404] },
        listTeams: { method: 'GET', url: '/api/v1/teams', expect: [200] },
        createTeam: { method: 'POST', url: '/api/v1/teams', body: { name: 'Outside' }, expect: [201] },
        getTeam: { method: 'GET', url: `/api/v1/teams/${ids.teamId}`, expect: [404] },
        setTeamPlan: {
          method: 'PUT',
          url: `/api/v1/teams/${ids.teamId}/plan`,
          body: { plan: 'enterprise' },
          expect: [403],
        },
        listOriginGrants: { method: 'GET', url: '/api/v1/origin-grants', expect: [403] },
        grantOrigin: {
          method: 'POST',
          url: '/api/v1/origin-grants',
          body: { teamId: ids.teamId, origin: 'http://10.0.0.5:8080' },
          expect: [403],
        },
        revokeOriginGrant: { method: 'DELETE', url: '/api/v1/origin-grants/1', expect: [403] },
        addTeamMember: {
          method: 'POST',
          url: `/api/v1/teams/${ids.teamId}/members`,
          body: { email: 'outsider@x.test' },
          expect: [404],
        },
        listTeamMembers: { method: 'GET', url: `/api/v1/teams/${ids.teamId}/members`, expect: [404] },
        setTeamMemberRole: {
          method: 'PUT',
          url: `/api/v1/teams/${ids.teamId}/members/2/role`,
          body: { role: 'member' },
          expect: [404],
        },
        removeTeamMember: { method: 'DELETE', url: `/api/v1/teams/${ids.teamId}/members/2`, expect: [404] },
        leaveTeam: { method: 'DELETE', url: `/api/v1/teams/${ids.teamId}/membership`, expect: [404] },
        inviteTeamMember: {
          method: 'POST',
          url: `/api/v1/teams/${ids.teamId}/invitations`,
          body: { email: 'friend@x.test' },
          expect: [404],
        },
        listTeamInvitations: { method: 'GET', url: `/api/v1/teams/${ids.teamId}/invitations`, expect: [404] },
        revokeTeamInvitation: {
          method: 'DELETE',
          url: `/api/v1/teams/${ids.teamId}/invitations/1`,
          expect: [404],
        },
        acceptInvitation: {
          method: 'POST',
          url: '/api/v1/invitations/accept',
          body: { token: 'kin_guess', name: 'x', password: 'a long password' },
          expect: [404],
        },
        signUp: {
          method: 'POST',
          url: '/api/v1/users',
          body: { email: 'new@x.test', name: 'x', password: 'a long password' },
          expect: [403],
        },
        getSignUpPolicy: { method: 'GET', url: '/api/v1/sign-up', expect: [200] },
        changePassword: {
          method: 'PUT',
          url: '/api/v1/me/password',
          body: { currentPassword: 'a guess', newPassword: 'a long password' },
          expect: [403],
        },
        createPasswordReset: {
          method: 'POST',
          url: `/api/v1/teams/${ids.teamId}/members/2/password-reset`,
          expect: [404],
        },
        resetPassword: {
          method: 'POST',
          url: '/api/v1/password-reset',
          body: { token: 'krs_guess', password: 'a long password' },
          expect: [404],
        },
        listProjects: { method: 'GET', url: '/api/v1/projects', expect: [200] },
        createProject: {
          method: 'POST',
          url: '/api/v1/projects',
          body: { teamId: ids.teamId, slug: 'intruder', name: 'x', originUrl: 'http://a' },
          expect: [404],
        },
        getProject: { method: 'GET', url: '/api/v1/projects/petstore', expect: [404] },
        createDeploy: {
          method: 'POST',
          url: '/api/v1/projects/petstore/deploys',
          body: { document: DOC },
          expect: [404],
        },
        listDeploys: { method: 'GET', url: '/api/v1/projects/petstore/deploys', expect: [404] },
        getDeploy: { method: 'GET', url: `/api/v1/projects/petstore/deploys/${ids.deployId}`, expect: [404] },
        promoteDeploy: {
          method: 'POST',
          url: `/api/v1/projects/petstore/deploys/${ids.deployId}/promote`,
          body: { allowBreaking: true },
          expect: [404],
        },
        getDeployDocument: {
          method: 'GET',
          url: `/api/v1/projects/petstore/deploys/${ids.deployId}/document?format=yaml`,
          expect: [404],
        },
        compareDeploys: {
          method: 'GET',
          url: `/api/v1/projects/petstore/deploys/${ids.deployId}/changes?against=${ids.deployId}`,
          expect: [404],
        },
        openPreview: {
          method: 'GET',
          url: `/api/v1/projects/petstore/deploys/${ids.deployId}/preview-access`,
          expect: [404],
        },
        createPreviewLink: {
          method: 'POST',
          url: `/api/v1/projects/petstore/deploys/${ids.deployId}/links`,
          body: { expiresIn: 600 },
          expect: [404],
        },
        listPreviewLinks: {
          method: 'GET',
          url: `/api/v1/projects/petstore/deploys/${ids.deployId}/links`,
          expect: [404],
        },
        revokePreviewLink: {
          method: 'DELETE',
          url: `/api/v1/projects/petstore/deploys/${ids.deployId}/links/1`,
          expect: [404],
        },
        listDomains: { method: 'GET', url: '/api/v1/projects/petstore/domains', expect: [404] },
        addDomain: {
          method: 'POST',
          url: '/api/v1/projects/petstore/domains',
          body: { hostname: 'evil.example.test' },
          expect: [404],
        },
        inspectDomain: {
          method: 'GET',
          url: '/api/v1/projects/petstore/domains/shop.example.test',
          expect: [404],
        },
        verifyDomain: {
          method: 'POST',
          url: '/api/v1/projects/petstore/domains/shop.example.test/verify',
          expect: [404],
        },
        reverifyDomain: {
          method: 'POST',
          url: '/api/v1/projects/petstore/domains/shop.example.test/reverify',
          expect: [404],
        },
        removeDomain: {
          method: 'DELETE',
          url: '/api/v1/projects/petstore/domains/shop.example.test',
          expect: [404],
        },
        exportDomainConfig: { method: 'GET', url: '/api/v1/projects/petstore/domain-config', expect: [404] },
        getProjectCors: { method: 'GET', url: '/api/v1/projects/petstore/cors', expect: [404] },
        setProjectCors: {
          method: 'PUT',
          url: '/api/v1/projects/petstore/cors',
          body: {
            enabled: true,
            allowedOrigins: ['https://evil.example.test'],
            allowedMethods: ['GET'],
            allowedHeaders: [],
            exposeHeaders: [],
            allowCredentials: true,
            maxAgeSeconds: 60,
          },
          expect: [404],
        },
        applyDomainConfig: {
          method: 'PUT',
          url: '/api/v1/projects/petstore/domain-config',
          body: { yaml: 'domains:\n  names: []\n', prune: true },
          expect: [404],
        },
        getProjectTraffic: {
          method: 'GET',
          url: '/api/v1/projects/petstore/traffic?since=7d&by=caller',
          expect: [404],
        },
        getDeprecationReach: {
          method: 'GET',
          url: '/api/v1/projects/petstore/traffic/deprecations',
          expect: [404],
        },
        listRequestLogs: { method: 'GET', url: '/api/v1/projects/petstore/logs?limit=5', expect: [404] },
        streamRequestLogs: { method: 'GET', url: '/api/v1/projects/petstore/logs/stream', expect: [404] },
        getWebhookEndpoint: { method: 'GET', url: `/api/v1/teams/${ids.teamId}/webhook`, expect: [404] },
        setWebhookEndpoint: {
          method: 'PUT',
          url: `/api/v1/teams/${ids.teamId}/webhook`,
          body: { url: 'https://evil.example.test/hook' },
          expect: [404],
        },
        removeWebhookEndpoint: {
          method: 'DELETE',
          url: `/api/v1/teams/${ids.teamId}/webhook`,
          expect: [404],
        },
        rotateWebhookSecret: {
          method: 'POST',
          url: `/api/v1/teams/${ids.teamId}/webhook/secret`,
          expect: [404],
        },
        sendWebhookTestEvent: {
          method: 'POST',
          url: `/api/v1/teams/${ids.teamId}/webhook/test`,
          expect: [404],
        },
        listWebhookDeliveries: {
          method: 'GET',
          url: `/api/v1/teams/${ids.teamId}/webhook/deliveries`,
          expect: [404],
        },
        redeliverWebhook: {
          method: 'POST',
          url: `/api/v1/teams/${ids.teamId}/webhook/deliveries/msg_x/redeliver`,
          expect: [404],
        },
      };
      const paths = managementDocument().paths as Record<string, Record<string, { operationId: string }>>;
      const operationIds = Object.values(paths).flatMap((item) =>
        Object.values(item).map((op) => op.operationId),
      );
      assert.deepEqual(
        operationIds.filter((id) => !(id in rows)),
        [],
        'operations without an isolation row',
      );
      for (const id of operationIds) {
        const row = rows[id];
        if (!row) continue;
        const answer = await outsider(row.method, row.url, row.body);
        assert.ok(row.expect.includes(answer.status), `${id}: ${answer.status} ${answer.text}`);
        for (const secret of ownerData) {
          assert.ok(
            !answer.text.includes(`"${secret}"`) && !answer.text.includes(`${secret}"`),
            `${id} leaked ${secret}: ${answer.text}`,
          );
        }
      }
      // The owner's things are untouched.
      const still = await owner('GET', '/api/v1/projects/petstore/domains/shop.example.test');
      assert.equal((still.body.domain as { state: string }).state, 'verified');
      assert.equal((await owner('GET', `/api/v1/teams/${ids.teamId}`)).body.plan, 'pro');
    });
  });
}
