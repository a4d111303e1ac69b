import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { FastifyInstance } from 'fastify';
import { buildPlatformApp } from '../../src/main/platform-app.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import { managementDocument } from '../../src/platform/api/app.ts';
import {
  type ApiScenario,
  apiClient,
  bearerClient,
  type Client,
  runScenarios,
  signedIn,
} from '../support/api-scenario.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import type { TestDns } from '../support/dns.ts';
import { emptyDocument, startPlatformContext, type TestPlatform } from '../support/platform.ts';
import { dnsEnv, petstoreZones, startZones } from '../support/platform-dns.ts';

const DOC = emptyDocument();
/** The operations a caller without an account may use: their token or password is the proof. */
const PUBLIC = new Set([
  'signIn',
  'getSession',
  'acceptInvitation',
  'inspectInvitation',
  'signUp',
  'getSignUpPolicy',
  'resetPassword',
  'getPasswordResetPolicy',
  'requestPasswordReset',
]);

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
    let owner: Client;
    let outsiderClient: Client;
    const ids = { teamId: 0, deployId: 0, tokenId: 0 };

    before(async () => {
      dns = await startZones(petstoreZones(['shop']));
      p = await startPlatformContext(dialect, {
        ...dnsEnv(dns),
        // The Petstore's origin, as `npm start` allows it: for the bootstrap team only, so the
        // tenant team below gets a platform admin's grant for it.
        KENNEL_ORIGIN_ALLOWLIST: 'http://127.0.0.1:4010',
      });
      app = buildPlatformApp(p.ctx);
      await app.ready();
      await createUser(p.ctx, { email: 'admin@x.test', password: 'admin password 1', isAdmin: true });
      await createUser(p.ctx, { email: 'owner@x.test', password: 'owner password 1' });
      await createUser(p.ctx, { email: 'outsider@x.test', password: 'outsider password' });
    });
    after(() => closeAll(app, p, dns));

    /** A caller with an API token, made through a session of the user. */
    async function tokenFor(email: string, password: string): Promise<Client> {
      const created = await (await signedIn(app, email, password))('POST', '/api/v1/tokens', {
        name: 'tests',
      });
      assert.equal(created.status, 201);
      return bearerClient(app, String(created.body.token));
    }

    it('signs in with a session cookie (HttpOnly, SameSite) and refuses changes without the CSRF token', async () => {
      const anonymous = apiClient(app);
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
      const noCsrf = await apiClient(app, { cookie })('POST', '/api/v1/teams', { name: 'Nope' });
      assert.equal(noCsrf.status, 403);
      assert.equal(noCsrf.body.code, 'csrf_failed');
      const me = await apiClient(app, { cookie })('GET', '/api/v1/me');
      // The cookie's own CSRF token, so a reloaded dashboard page can keep making changes.
      assert.deepEqual(me.body, { email: 'owner@x.test', isAdmin: false, csrfToken: signIn.body.csrfToken });
      const none = await anonymous('GET', '/api/v1/projects');
      assert.equal(none.status, 401);
      assert.equal(none.headers['www-authenticate'], 'Bearer realm="kennel"');
    });

    it('walks a project from creation to a verified domain with an API token', async () => {
      owner = await tokenFor('owner@x.test', 'owner password 1');
      const admin = await tokenFor('admin@x.test', 'admin password 1');
      outsiderClient = await tokenFor('outsider@x.test', 'outsider password');
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
      // A row per operation: the outsider calls it against the owner's things; the answer has the
      // status given and carries none of the owner's data.
      const outsider = (
        name: string,
        method: ApiScenario['method'],
        url: string,
        status: number,
        body?: unknown,
      ): ApiScenario<'outsider'> => ({
        name,
        as: 'outsider',
        method,
        url,
        status,
        body,
        hides: ownerData.map((secret) => `${secret}"`),
      });
      const rows = [
        outsider('signIn', 'POST', '/api/v1/session', 401, { email: 'owner@x.test', password: 'guess' }),
        outsider('signOut', 'DELETE', '/api/v1/session', 204),
        outsider('getSession', 'GET', '/api/v1/session', 200),
        outsider('getMe', 'GET', '/api/v1/me', 200),
        outsider('listTokens', 'GET', '/api/v1/tokens', 200),
        outsider('createToken', 'POST', '/api/v1/tokens', 201, { name: 'mine' }),
        outsider('revokeToken', 'DELETE', `/api/v1/tokens/${ids.tokenId}`, 404),
        outsider('listTeams', 'GET', '/api/v1/teams', 200),
        outsider('createTeam', 'POST', '/api/v1/teams', 201, { name: 'Outside' }),
        outsider('getTeam', 'GET', `/api/v1/teams/${ids.teamId}`, 404),
        outsider('setTeamPlan', 'PUT', `/api/v1/teams/${ids.teamId}/plan`, 403, { plan: 'enterprise' }),
        outsider('listOriginGrants', 'GET', '/api/v1/origin-grants', 403),
        outsider('grantOrigin', 'POST', '/api/v1/origin-grants', 403, {
          teamId: ids.teamId,
          origin: 'http://10.0.0.5:8080',
        }),
        outsider('revokeOriginGrant', 'DELETE', '/api/v1/origin-grants/1', 403),
        outsider('addTeamMember', 'POST', `/api/v1/teams/${ids.teamId}/members`, 404, {
          email: 'outsider@x.test',
        }),
        outsider('listTeamMembers', 'GET', `/api/v1/teams/${ids.teamId}/members`, 404),
        outsider('setTeamMemberRole', 'PUT', `/api/v1/teams/${ids.teamId}/members/2/role`, 404, {
          role: 'member',
        }),
        outsider('removeTeamMember', 'DELETE', `/api/v1/teams/${ids.teamId}/members/2`, 404),
        outsider('leaveTeam', 'DELETE', `/api/v1/teams/${ids.teamId}/membership`, 404),
        outsider('inviteTeamMember', 'POST', `/api/v1/teams/${ids.teamId}/invitations`, 404, {
          email: 'friend@x.test',
        }),
        outsider('listTeamInvitations', 'GET', `/api/v1/teams/${ids.teamId}/invitations`, 404),
        outsider('revokeTeamInvitation', 'DELETE', `/api/v1/teams/${ids.teamId}/invitations/1`, 404),
        outsider('renameTeam', 'PATCH', `/api/v1/teams/${ids.teamId}`, 404, { name: 'Mine now' }),
        outsider('deleteTeam', 'DELETE', `/api/v1/teams/${ids.teamId}`, 404),
        outsider('inspectInvitation', 'POST', '/api/v1/invitations/inspect', 404, { token: 'kin_guess' }),
        outsider('acceptInvitation', 'POST', '/api/v1/invitations/accept', 404, {
          token: 'kin_guess',
          name: 'x',
          password: 'a long password',
        }),
        outsider('signUp', 'POST', '/api/v1/users', 403, {
          email: 'new@x.test',
          name: 'x',
          password: 'a long password',
        }),
        outsider('getSignUpPolicy', 'GET', '/api/v1/sign-up', 200),
        outsider('getPasswordResetPolicy', 'GET', '/api/v1/password-reset/policy', 200),
        // This platform has no SMTP_URL: 409 mail_not_configured, for any email.
        outsider('requestPasswordReset', 'POST', '/api/v1/password-reset/request', 409, {
          email: 'owner@x.test',
        }),
        outsider('changePassword', 'PUT', '/api/v1/me/password', 403, {
          currentPassword: 'a guess',
          newPassword: 'a long password',
        }),
        outsider('createPasswordReset', 'POST', `/api/v1/teams/${ids.teamId}/members/2/password-reset`, 404),
        outsider('resetPassword', 'POST', '/api/v1/password-reset', 404, {
          token: 'krs_guess',
          password: 'a long password',
        }),
        outsider('listProjects', 'GET', '/api/v1/projects', 200),
        outsider('createProject', 'POST', '/api/v1/projects', 404, {
          teamId: ids.teamId,
          slug: 'intruder',
          name: 'x',
          originUrl: 'http://a',
        }),
        outsider('getProject', 'GET', '/api/v1/projects/petstore', 404),
        outsider('createDeploy', 'POST', '/api/v1/projects/petstore/deploys', 404, { document: DOC }),
        outsider('listDeploys', 'GET', '/api/v1/projects/petstore/deploys', 404),
        outsider('getDeploy', 'GET', `/api/v1/projects/petstore/deploys/${ids.deployId}`, 404),
        outsider('promoteDeploy', 'POST', `/api/v1/projects/petstore/deploys/${ids.deployId}/promote`, 404, {
          allowBreaking: true,
        }),
        outsider(
          'getDeployDocument',
          'GET',
          `/api/v1/projects/petstore/deploys/${ids.deployId}/document?format=yaml`,
          404,
        ),
        outsider(
          'compareDeploys',
          'GET',
          `/api/v1/projects/petstore/deploys/${ids.deployId}/changes?against=${ids.deployId}`,
          404,
        ),
        outsider(
          'openPreview',
          'GET',
          `/api/v1/projects/petstore/deploys/${ids.deployId}/preview-access`,
          404,
        ),
        outsider(
          'createPreviewLink',
          'POST',
          `/api/v1/projects/petstore/deploys/${ids.deployId}/links`,
          404,
          { expiresIn: 600 },
        ),
        outsider('listPreviewLinks', 'GET', `/api/v1/projects/petstore/deploys/${ids.deployId}/links`, 404),
        outsider(
          'revokePreviewLink',
          'DELETE',
          `/api/v1/projects/petstore/deploys/${ids.deployId}/links/1`,
          404,
        ),
        outsider('listDomains', 'GET', '/api/v1/projects/petstore/domains', 404),
        outsider('addDomain', 'POST', '/api/v1/projects/petstore/domains', 404, {
          hostname: 'evil.example.test',
        }),
        outsider('inspectDomain', 'GET', '/api/v1/projects/petstore/domains/shop.example.test', 404),
        outsider('verifyDomain', 'POST', '/api/v1/projects/petstore/domains/shop.example.test/verify', 404),
        outsider(
          'reverifyDomain',
          'POST',
          '/api/v1/projects/petstore/domains/shop.example.test/reverify',
          404,
        ),
        outsider('removeDomain', 'DELETE', '/api/v1/projects/petstore/domains/shop.example.test', 404),
        outsider('exportDomainConfig', 'GET', '/api/v1/projects/petstore/domain-config', 404),
        outsider('getProjectCors', 'GET', '/api/v1/projects/petstore/cors', 404),
        outsider('updateProject', 'PATCH', '/api/v1/projects/petstore', 404, {
          name: 'Taken over',
          originUrl: 'https://evil.example.test',
        }),
        outsider('getProjectDeletion', 'GET', '/api/v1/projects/petstore/deletion', 404),
        outsider('deleteProject', 'DELETE', '/api/v1/projects/petstore', 404),
        outsider('setProjectCors', 'PUT', '/api/v1/projects/petstore/cors', 404, {
          enabled: true,
          allowedOrigins: ['https://evil.example.test'],
          allowedMethods: ['GET'],
          allowedHeaders: [],
          exposeHeaders: [],
          allowCredentials: true,
          maxAgeSeconds: 60,
        }),
        outsider('applyDomainConfig', 'PUT', '/api/v1/projects/petstore/domain-config', 404, {
          yaml: 'domains:\n names: []\n',
          prune: true,
        }),
        outsider('getProjectTraffic', 'GET', '/api/v1/projects/petstore/traffic?since=7d&by=caller', 404),
        outsider('getDeprecationReach', 'GET', '/api/v1/projects/petstore/traffic/deprecations', 404),
        outsider('listRequestLogs', 'GET', '/api/v1/projects/petstore/logs?limit=5', 404),
        outsider('streamRequestLogs', 'GET', '/api/v1/projects/petstore/logs/stream', 404),
        outsider('getWebhookEndpoint', 'GET', `/api/v1/teams/${ids.teamId}/webhook`, 404),
        outsider('listWebhookEndpoints', 'GET', `/api/v1/teams/${ids.teamId}/webhook-endpoints`, 404),
        outsider('setWebhookEndpoint', 'PUT', `/api/v1/teams/${ids.teamId}/webhook`, 404, {
          url: 'https://evil.example.test/hook',
        }),
        outsider('removeWebhookEndpoint', 'DELETE', `/api/v1/teams/${ids.teamId}/webhook`, 404),
        outsider('rotateWebhookSecret', 'POST', `/api/v1/teams/${ids.teamId}/webhook/secret`, 404),
        outsider('sendWebhookTestEvent', 'POST', `/api/v1/teams/${ids.teamId}/webhook/test`, 404),
        outsider('listWebhookDeliveries', 'GET', `/api/v1/teams/${ids.teamId}/webhook/deliveries`, 404),
        outsider(
          'redeliverWebhook',
          'POST',
          `/api/v1/teams/${ids.teamId}/webhook/deliveries/msg_x/redeliver`,
          404,
        ),
      ];
      const paths = managementDocument().paths as Record<string, Record<string, { operationId: string }>>;
      const operationIds = Object.values(paths).flatMap((item) =>
        Object.values(item).map((op) => op.operationId),
      );
      const rowNames = rows.map((row) => row.name);
      assert.deepEqual(
        operationIds.filter((id) => !rowNames.includes(id)),
        [],
        'operations without an isolation row',
      );
      // In the document's order.
      const ordered = operationIds.flatMap((id) => rows.filter((row) => row.name === id));
      await runScenarios({ outsider: outsiderClient }, ordered);
      // The owner's things are untouched.
      const still = await owner('GET', '/api/v1/projects/petstore/domains/shop.example.test');
      assert.equal((still.body.domain as { state: string }).state, 'verified');
      assert.equal((await owner('GET', `/api/v1/teams/${ids.teamId}`)).body.plan, 'pro');
    });
  });
}
