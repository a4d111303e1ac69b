import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createToken } from '../../src/platform/accounts/credentials.ts';
import { addMember } from '../../src/platform/accounts/teams.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import { testDialects } from '../support/databases.ts';
import { type PlainEdge, startPlainEdge } from '../support/edge.ts';
import { listenOnLoopback, type Reply, requestAs } from '../support/http.ts';
import { seedPetstoreProject, startPlatformContext, type TestPlatform } from '../support/platform.ts';

/**
 * A project's CORS policy, set through the management API and applied by a real edge: off by
 * default (preflights reach the origin as before), on it answers preflights itself and stamps
 * actual answers in place of the origin's CORS headers, a change reaches the edge at once, and
 * the published document may be loaded from any origin.
 */

const SITE = 'petstore.platform.test';
const APP = 'https://app.example.com';
const POLICY = {
  enabled: true,
  allowedOrigins: [APP],
  allowedMethods: ['GET', 'POST', 'PUT', 'DELETE'],
  allowedHeaders: ['Authorization', 'Content-Type'],
  exposeHeaders: ['ETag'],
  allowCredentials: true,
  maxAgeSeconds: 300,
};

/** An origin that says what it received and sends CORS headers of its own (the edge must replace them). */
async function startOrigin(): Promise<{ server: Server; url: string; methods: string[] }> {
  const methods: string[] = [];
  const server = createServer((req, res) => {
    methods.push(`${req.method} ${req.url}`);
    res.writeHead(200, {
      'content-type': 'application/json',
      'access-control-allow-origin': 'https://origin-says.example',
      'access-control-allow-methods': 'PATCH',
      vary: 'Accept-Encoding',
      etag: '"v1"',
    });
    res.end(JSON.stringify({ method: req.method }));
  });
  const port = await listenOnLoopback(server);
  return { server, url: `http://127.0.0.1:${port}`, methods };
}

for (const dialect of testDialects()) {
  describe(`a project's CORS policy at the edge (${dialect})`, () => {
    let p: TestPlatform;
    let edge: PlainEdge;
    let origin: Awaited<ReturnType<typeof startOrigin>>;
    let ownerToken: string;
    let memberToken: string;
    let outsiderToken: string;

    const api = (token: string, method: string, body?: unknown): Promise<Reply> =>
      requestAs(edge.port, 'platform.test', '/api/v1/projects/petstore/cors', {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
    const preflightFrom = (from: string, method: string, headers?: string, path = '/api/pets') =>
      requestAs(edge.port, SITE, path, {
        method: 'OPTIONS',
        headers: {
          origin: from,
          'access-control-request-method': method,
          ...(headers !== undefined && { 'access-control-request-headers': headers }),
        },
      });

    before(async () => {
      p = await startPlatformContext(dialect);
      origin = await startOrigin();
      const { owner, team } = await seedPetstoreProject(p.ctx, origin.url);
      const member = await createUser(p.ctx, { email: 'member@x.test', password: 'member password 1' });
      await addMember(p.ctx, owner, team.id, 'member@x.test', 'member');
      const outsider = await createUser(p.ctx, { email: 'outsider@x.test', password: 'outsider password 1' });
      ownerToken = (await createToken(p.ctx, owner, 'ci')).token;
      memberToken = (await createToken(p.ctx, member, 'ci')).token;
      outsiderToken = (await createToken(p.ctx, outsider, 'ci')).token;
      edge = await startPlainEdge(p);
    });
    after(async () => {
      await edge?.close();
      origin?.server.close();
      await p?.close();
    });

    it('is off by default: a preflight goes to the origin and its CORS headers pass unchanged', async () => {
      const read = await api(ownerToken, 'GET');
      assert.equal(read.status, 200, read.text);
      assert.deepEqual(JSON.parse(read.text), {
        enabled: false,
        allowedOrigins: [],
        allowedMethods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
        allowedHeaders: ['authorization', 'content-type'],
        exposeHeaders: [],
        allowCredentials: false,
        maxAgeSeconds: 600,
      });
      const answer = await preflightFrom(APP, 'PUT');
      assert.equal(answer.status, 200);
      assert.deepEqual(origin.methods.slice(-1), ['OPTIONS /pets']);
      assert.equal(answer.headers['access-control-allow-origin'], 'https://origin-says.example');
      const get = await requestAs(edge.port, SITE, '/api/pets', { headers: { origin: APP } });
      assert.equal(get.headers['access-control-allow-origin'], 'https://origin-says.example');
      assert.equal(get.headers.vary, 'Accept-Encoding');
    });

    it('serves the published document to any origin, and answers its preflight', async () => {
      for (const path of ['/openapi.json', '/openapi.yaml']) {
        const answer = await requestAs(edge.port, SITE, path, { headers: { origin: APP } });
        assert.equal(answer.status, 200, path);
        assert.equal(answer.headers['access-control-allow-origin'], '*', path);
        const pre = await preflightFrom('https://docs.elsewhere.example', 'GET', 'x-client', path);
        assert.equal(pre.status, 204, path);
        assert.equal(pre.headers['access-control-allow-origin'], '*');
        assert.equal(pre.headers['access-control-allow-methods'], 'GET, HEAD');
        assert.equal(pre.headers['access-control-allow-headers'], 'x-client');
      }
    });

    it('refuses an invalid policy with each problem under its field, and changes nothing', async () => {
      const answer = await api(ownerToken, 'PUT', {
        ...POLICY,
        allowedOrigins: ['*', 'https://app.example.com/path'],
      });
      assert.equal(answer.status, 422, answer.text);
      const body = JSON.parse(answer.text) as { code: string; status: number; problems: unknown[] };
      assert.equal(body.code, 'invalid_cors_policy');
      assert.equal(body.status, 422);
      assert.deepEqual(body.problems, [
        {
          field: 'allowedOrigins',
          message:
            '"https://app.example.com/path" is not an exact origin (no path, query, trailing slash or user; lower-case host; no default port): write https://app.example.com.',
        },
        {
          field: 'allowedOrigins',
          message: '`*` allows every origin: list it alone, or list exact origins without it.',
        },
        {
          field: 'allowedOrigins',
          message:
            '`*` cannot be used with credentials (browsers refuse it): list exact values, or turn credentials off.',
        },
      ]);
      assert.equal(JSON.parse((await api(ownerToken, 'GET')).text).enabled, false);
    });

    it('is set by a team member, not by an outsider, and reaches the edge at once', async () => {
      const refused = await api(outsiderToken, 'PUT', POLICY);
      assert.equal(refused.status, 404, refused.text);
      assert.equal(JSON.parse(refused.text).code, 'project_not_found');
      const set = await api(memberToken, 'PUT', POLICY);
      assert.equal(set.status, 200, set.text);
      assert.deepEqual(JSON.parse(set.text), {
        ...POLICY,
        allowedHeaders: ['authorization', 'content-type'],
        exposeHeaders: ['etag'],
      });
      const before = origin.methods.length;
      const answer = await preflightFrom(APP, 'PUT', 'Content-Type, Authorization', '/api/pets/1');
      assert.equal(answer.status, 204, answer.text);
      assert.equal(answer.text, '');
      assert.equal(answer.headers['access-control-allow-origin'], APP);
      assert.equal(answer.headers['access-control-allow-methods'], 'GET, POST, PUT, DELETE');
      assert.equal(answer.headers['access-control-allow-headers'], 'content-type, authorization');
      assert.equal(answer.headers['access-control-allow-credentials'], 'true');
      assert.equal(answer.headers['access-control-max-age'], '300');
      assert.equal(origin.methods.length, before, 'the edge answered the preflight itself');
    });

    it('refuses preflights the policy does not allow with 403 cors_not_allowed and no allow headers', async () => {
      const rows: [string, string, string | undefined, string][] = [
        [
          'https://evil.example',
          'GET',
          undefined,
          "Origin https://evil.example may not call this API from a browser. A team member can add it to the project's CORS allowed origins.",
        ],
        [
          APP,
          'PATCH',
          undefined,
          "Method PATCH is not among the project's CORS allowed methods (GET, POST, PUT, DELETE). A team member can add it.",
        ],
        [
          APP,
          'POST',
          'content-type, idempotency-key',
          "Request header idempotency-key is not among the project's CORS allowed headers (authorization, content-type). A team member can add it.",
        ],
      ];
      const before = origin.methods.length;
      for (const [from, method, headers, message] of rows) {
        const answer = await preflightFrom(from, method, headers);
        assert.equal(answer.status, 403, answer.text);
        assert.deepEqual(JSON.parse(answer.text), { code: 'cors_not_allowed', message, status: 403 });
        assert.equal(answer.headers['access-control-allow-origin'], undefined);
        assert.equal(answer.headers['access-control-allow-methods'], undefined);
      }
      assert.equal(origin.methods.length, before);
    });

    it("stamps actual answers for allowed origins in place of the origin's CORS headers", async () => {
      const allowed = await requestAs(edge.port, SITE, '/api/pets', { headers: { origin: APP } });
      assert.equal(allowed.status, 200);
      assert.equal(allowed.headers['access-control-allow-origin'], APP);
      assert.equal(allowed.headers['access-control-allow-credentials'], 'true');
      assert.equal(allowed.headers['access-control-expose-headers'], 'etag');
      assert.equal(allowed.headers['access-control-allow-methods'], undefined, "the origin's is dropped");
      assert.equal(allowed.headers.vary, 'Accept-Encoding, Origin');
      assert.equal(allowed.headers.etag, '"v1"');
      const other = await requestAs(edge.port, SITE, '/api/pets', {
        headers: { origin: 'https://evil.example' },
      });
      assert.equal(other.status, 200);
      assert.equal(other.headers['access-control-allow-origin'], undefined);
      assert.equal(other.headers.vary, 'Accept-Encoding, Origin');
      // A request that is not a preflight goes to the origin as ever.
      const options = await requestAs(edge.port, SITE, '/api/pets', { method: 'OPTIONS' });
      assert.equal(options.status, 200);
      assert.deepEqual(origin.methods.slice(-1), ['OPTIONS /pets']);
    });

    it('turned off, preflights go to the origin again at once', async () => {
      const off = await api(ownerToken, 'PUT', { ...POLICY, enabled: false });
      assert.equal(off.status, 200, off.text);
      const answer = await preflightFrom(APP, 'PUT');
      assert.equal(answer.status, 200);
      assert.equal(answer.headers['access-control-allow-origin'], 'https://origin-says.example');
      assert.deepEqual(origin.methods.slice(-1), ['OPTIONS /pets']);
      // The settings are kept for the next time it is turned on.
      assert.deepEqual(JSON.parse((await api(ownerToken, 'GET')).text).allowedOrigins, [APP]);
    });
  });
}
