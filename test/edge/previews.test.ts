import assert from 'node:assert/strict';
import type { RequestListener } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createToken } from '../../src/platform/accounts/credentials.ts';
import { addMember, createTeam } from '../../src/platform/accounts/teams.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import { DefaultAddressCertificates } from '../../src/platform/certificates/default-addresses.ts';
import type { Actor } from '../../src/platform/context.ts';
import { deployProject } from '../../src/platform/projects/deploys.ts';
import { promoteDeploy } from '../../src/platform/projects/promote-deploy.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import { startTestEdge, type TestEdge } from '../support/edge.ts';
import {
  type EdgeSite,
  type InternalCertificates,
  internalCertificates,
  type LoopbackServer,
  startEdgeSite,
  startOrigin,
} from '../support/edge-site.ts';
import { tlsGet } from '../support/edge-tls.ts';
import { type Reply, requestAs } from '../support/http.ts';
import type { TestPlatform } from '../support/platform.ts';

/**
 * Preview deploys through the edge, over real sockets: a preview leaves the live site alone and is
 * served at `<slug>--<id>.<platform domain>` (HTTP and HTTPS) to its team's members, handed over
 * from the platform, and to holders of a live share link; anyone else gets the same 401 whether
 * or not the preview exists.
 */
const documentOf = (version: string, paths: Record<string, unknown>) =>
  JSON.stringify({ openapi: '3.0.3', info: { title: 'Widgets', version }, paths });
const OK = { responses: { '200': { description: 'OK' } } };
const LIVE_DOCUMENT = documentOf('1.0.0', { '/widgets': { get: OK } });
const PREVIEW_DOCUMENT = documentOf('2.0.0-preview', { '/widgets': { get: OK }, '/gadgets': { get: OK } });

/** The Cookie headers the origins received, in order. */
const originCookies: (string | undefined)[] = [];

/** An origin answering who it is, noting what it was asked. */
const originNamed =
  (name: string, calls: string[]): RequestListener =>
  (req, res) => {
    calls.push(`${name} ${req.url}`);
    originCookies.push(req.headers.cookie);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ origin: name }));
  };

/**
 * The edge over HTTP and HTTPS with the internal CA's certificates, default addresses'
 * certificates issued by it on first use.
 */
async function startPreviewEdge(p: TestPlatform, certificates: InternalCertificates): Promise<TestEdge> {
  const { platformDomain } = p.ctx.config;
  return startTestEdge(p, {
    ...certificates,
    defaultAddresses: new DefaultAddressCertificates(p.ctx.db, platformDomain, certificates.issuer),
  });
}

/** The cookie pair (`name=value`) a Set-Cookie header sets. */
const cookiePair = (reply: Reply) => String(reply.headers['set-cookie']).split(';')[0] as string;
/** The path and query of a URL, for requests sent with the host chosen apart. */
const pathOf = (url: string) => {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
};
const withoutRequestId = (reply: Reply) => ({
  status: reply.status,
  type: reply.headers['content-type'],
  challenge: reply.headers['www-authenticate'],
  text: reply.text,
});

for (const dialect of testDialects()) {
  describe(`previews through the edge (${dialect})`, () => {
    let site: EdgeSite;
    let p: TestPlatform;
    let edge: TestEdge;
    let rootPem: string;
    let liveOrigin: LoopbackServer;
    let previewOrigin: LoopbackServer;
    const calls: string[] = [];
    let ownerToken: string;
    let outsiderToken: string;
    let previewId: number;
    let liveId: number;
    let previewHostName: string;
    let memberId: number;
    let teamId: number;
    let ownerActor: Actor;

    const platform = (method: string, path: string, token: string, body?: unknown) =>
      requestAs(edge.httpPort, `platform.test:${edge.httpPort}`, path, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
    const preview = (path: string, headers: Record<string, string> = {}, host = previewHostName) =>
      requestAs(edge.httpPort, host, path, { headers });
    /** Signs in through the edge as the dashboard does; answers the plain-HTTP session cookie. */
    const signIn = async (email: string, password: string) => {
      const answer = await requestAs(edge.httpPort, 'platform.test', '/api/v1/session', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password }),
      });
      assert.equal(answer.status, 201, answer.text);
      return cookiePair(answer);
    };
    /** The dashboard's "Open preview" link: where the platform sends the browser. */
    const handOff = async (session: string) => {
      const link = await requestAs(
        edge.httpPort,
        `platform.test:${edge.httpPort}`,
        `/api/v1/projects/petstore/deploys/${previewId}/preview-access`,
        { headers: { cookie: session, accept: 'text/html,application/xhtml+xml' } },
      );
      assert.equal(link.status, 303, link.text);
      const location = String(link.headers.location);
      assert.equal(JSON.parse(link.text).url, location);
      return location;
    };
    /** Follows the hand-off to the preview host, as the browser does, to its cookie. */
    const handOver = async (session: string) => {
      const location = await handOff(session);
      return { location, exchanged: await preview(pathOf(location)) };
    };

    before(async () => {
      liveOrigin = await startOrigin(originNamed('live', calls));
      previewOrigin = await startOrigin(originNamed('preview', calls));
      site = await startEdgeSite(dialect, {
        now: true,
        projects: [
          { slug: 'petstore', name: 'Petstore', originUrl: liveOrigin.url, document: LIVE_DOCUMENT },
          // The preview's origin, granted to the team as a second project's (test/support/origins.ts).
          { slug: 'spare', name: 'Spare', originUrl: previewOrigin.url, document: false },
        ],
      });
      ({ p, owner: ownerActor } = site);
      teamId = site.team.id;
      liveId = site.deploys[0]?.id as number;
      const certificates = await internalCertificates(p);
      rootPem = certificates.rootPem;
      const member = await createUser(p.ctx, { email: 'member@x.test', password: 'member password 1' });
      memberId = member.userId;
      await addMember(p.ctx, ownerActor, teamId, 'member@x.test', 'member');
      const outsider = await createUser(p.ctx, { email: 'outsider@x.test', password: 'outsider password 1' });
      await createTeam(p.ctx, outsider, 'Elsewhere');
      ownerToken = (await createToken(p.ctx, ownerActor, 'test')).token;
      outsiderToken = (await createToken(p.ctx, outsider, 'test')).token;
      edge = await startPreviewEdge(p, certificates);
      const deployed = await deployProject(p.ctx, ownerActor, 'petstore', {
        document: PREVIEW_DOCUMENT,
        originUrl: previewOrigin.url,
        preview: true,
      });
      previewId = deployed.id;
      previewHostName = `petstore--${previewId}.platform.test`;
    });

    after(() => closeAll(edge, liveOrigin, previewOrigin, site));

    it('leaves the live site alone', async () => {
      const project = await platform('GET', '/api/v1/projects/petstore', ownerToken);
      assert.equal(JSON.parse(project.text).activeDeployId, liveId);
      const live = await requestAs(edge.httpPort, 'petstore.platform.test', '/openapi.json');
      assert.equal(live.status, 200);
      assert.equal(JSON.parse(live.text).info.version, '1.0.0');
      calls.length = 0;
      assert.deepEqual(
        JSON.parse((await requestAs(edge.httpPort, 'petstore.platform.test', '/api/widgets')).text),
        {
          origin: 'live',
        },
      );
      assert.deepEqual(calls, ['live /widgets']);
    });

    it('refuses anyone without access alike, whether or not the preview exists', async () => {
      calls.length = 0;
      const page = await preview('/', { accept: 'text/html' });
      assert.equal(page.status, 401);
      assert.match(page.text, /<h1>Private preview<\/h1>/);
      assert.doesNotMatch(page.text, /Widgets|2\.0\.0/);
      const api = await preview('/api/gadgets');
      assert.deepEqual(JSON.parse(api.text), {
        code: 'preview_private',
        message:
          'This is a private preview. Members of its team open it from the dashboard (the deploy’s “Open preview”); anyone else needs a share link from the team.',
        status: 401,
      });
      assert.equal(api.headers['www-authenticate'], 'Cookie realm="kennel-preview"');
      assert.deepEqual(calls, [], 'the origin was not called');
      for (const missing of ['petstore--999999.platform.test', 'nothing--3.platform.test']) {
        for (const [path, headers] of [
          ['/', { accept: 'text/html' }],
          ['/openapi.json', {}],
          ['/api/gadgets', {}],
        ] as const) {
          assert.deepEqual(
            withoutRequestId(await preview(path, headers, missing)),
            withoutRequestId(await preview(path, headers)),
            `${missing}${path}`,
          );
        }
      }
      const forged = await preview('/?kennel_preview=kpl_guess', { accept: 'application/json' });
      assert.equal(forged.status, 401);
      assert.match(JSON.parse(forged.text).message, /^This preview link opens nothing/);
      const cookie = await preview('/openapi.json', { cookie: 'kennel_preview=kpc_guess' });
      assert.equal(cookie.status, 401);
    });

    it('hands a signed-in member over from the platform, once', async () => {
      const session = await signIn('member@x.test', 'member password 1');
      const { location, exchanged } = await handOver(session);
      assert.match(
        location,
        new RegExp(
          `^http://${previewHostName.replaceAll('.', '\\.')}:${edge.httpPort}/\\?kennel_preview=kph_[\\w-]{43}$`,
        ),
      );
      assert.equal(exchanged.status, 303);
      assert.equal(exchanged.headers.location, '/');
      assert.match(
        String(exchanged.headers['set-cookie']),
        /^kennel_preview=kpc_[\w-]{43}; Max-Age=43200; Path=\/; HttpOnly; SameSite=Lax$/,
      );
      const cookie = cookiePair(exchanged);
      const page = await preview('/', { cookie, accept: 'text/html' });
      assert.equal(page.status, 200);
      // The banner: which deploy, not live, its changes against the live deploy as stored.
      const stored = await p.ctx.db
        .selectFrom('deploys')
        .select(['number', 'changes'])
        .where('id', '=', previewId)
        .executeTakeFirstOrThrow();
      const count = (JSON.parse(stored.changes ?? '[]') as unknown[]).length;
      assert.equal(stored.number, 2);
      assert.match(
        page.text,
        /<body>\n<aside class="kennel-preview-banner" role="note"[^>]*><strong>Preview of deploy #2 — not live\.<\/strong> /,
      );
      assert.ok(
        page.text.includes(
          count === 0
            ? 'No changes against the live deploy #1.'
            : `${count} change${count === 1 ? '' : 's'} against the live deploy #1</summary>`,
        ),
        page.text.slice(0, 3000),
      );
      assert.equal(page.headers['x-robots-tag'], 'noindex');
      const document = await preview('/openapi.json', { cookie });
      assert.equal(JSON.parse(document.text).info.version, '2.0.0-preview');
      calls.length = 0;
      originCookies.length = 0;
      const api = await preview('/api/gadgets?x=1', { cookie: `theme=dark; ${cookie}; lang=en` });
      assert.deepEqual(JSON.parse(api.text), { origin: 'preview' });
      assert.deepEqual(calls, ['preview /gadgets?x=1'], "the preview's own origin");
      // The preview's cookie is the edge's: the origin gets the site's other cookies only.
      assert.deepEqual(originCookies, ['theme=dark; lang=en']);
      // A client that is not a browser gets the address to open.
      const asJson = await platform(
        'GET',
        `/api/v1/projects/petstore/deploys/${previewId}/preview-access`,
        ownerToken,
      );
      assert.equal(asJson.status, 200);
      assert.equal(asJson.headers.location, undefined);
      const handedOff = JSON.parse(asJson.text);
      assert.match(handedOff.url, /\?kennel_preview=kph_[\w-]{43}$/);
      assert.equal(Date.parse(handedOff.expiresAt) - p.clock.now().getTime(), 60_000);
      // The hand-off token works once.
      const again = await preview(pathOf(location));
      assert.equal(again.status, 401);
      // The cookie is this preview's only.
      const other = await deployProject(p.ctx, ownerActor, 'petstore', {
        document: PREVIEW_DOCUMENT,
        preview: true,
      });
      assert.equal(
        (await preview('/openapi.json', { cookie }, `petstore--${other.id}.platform.test`)).status,
        401,
      );
      // Out of the team, out of the preview: at once.
      await p.ctx.db.deleteFrom('memberships').where('user_id', '=', memberId).execute();
      assert.equal((await preview('/openapi.json', { cookie })).status, 401);
      await p.ctx.db
        .insertInto('memberships')
        .values({
          team_id: teamId,
          user_id: memberId,
          role: 'member',
          created_at: p.clock.now().toISOString(),
        })
        .execute();
      assert.equal((await preview('/openapi.json', { cookie })).status, 200);
    });

    it('opens for a share link until it expires', async () => {
      const made = await platform(
        'POST',
        `/api/v1/projects/petstore/deploys/${previewId}/links`,
        ownerToken,
        {
          expiresIn: 3600,
        },
      );
      assert.equal(made.status, 201, made.text);
      const link = JSON.parse(made.text);
      assert.equal(link.host, previewHostName);
      assert.equal(link.createdBy, 'owner@x.test');
      assert.equal(link.active, true);
      assert.equal(link.url, `http://${previewHostName}:${edge.httpPort}/?kennel_preview=${link.token}`);
      assert.equal(Date.parse(link.expiresAt) - Date.parse(link.createdAt), 3_600_000);
      // Two people open the same link; each gets a cookie of their own.
      const first = await preview(pathOf(link.url));
      const second = await preview(`${pathOf(link.url)}&tab=gadgets`);
      assert.equal(first.status, 303);
      assert.equal(second.headers.location, '/?tab=gadgets');
      assert.match(String(first.headers['set-cookie']), /; Max-Age=3600; /);
      const cookie = cookiePair(first);
      assert.notEqual(cookie, cookiePair(second));
      assert.equal((await preview('/openapi.json', { cookie })).status, 200);
      const listed = JSON.parse(
        (await platform('GET', `/api/v1/projects/petstore/deploys/${previewId}/links`, ownerToken)).text,
      );
      assert.deepEqual(
        listed.map((l: { id: number; active: boolean; token?: string }) => [l.id, l.active, l.token]),
        [[link.id, true, undefined]],
      );
      p.clock.advance(3_600_000);
      assert.equal((await preview('/openapi.json', { cookie })).status, 401);
      assert.equal((await preview(pathOf(link.url))).status, 401);
      const expired = JSON.parse(
        (await platform('GET', `/api/v1/projects/petstore/deploys/${previewId}/links`, ownerToken)).text,
      );
      assert.equal(expired[0].active, false);
    });

    it('stops opening for a revoked share link, and its browsers with it', async () => {
      const link = JSON.parse(
        (await platform('POST', `/api/v1/projects/petstore/deploys/${previewId}/links`, ownerToken, {})).text,
      );
      assert.equal(
        Date.parse(link.expiresAt) - Date.parse(link.createdAt),
        7 * 86_400_000,
        'a week by default',
      );
      const cookie = cookiePair(await preview(pathOf(link.url)));
      assert.equal((await preview('/', { cookie })).status, 200);
      const revoked = await platform(
        'DELETE',
        `/api/v1/projects/petstore/deploys/${previewId}/links/${link.id}`,
        ownerToken,
      );
      assert.equal(revoked.status, 204);
      assert.equal((await preview('/', { cookie })).status, 401);
      assert.equal((await preview(pathOf(link.url))).status, 401);
      const twice = await platform(
        'DELETE',
        `/api/v1/projects/petstore/deploys/${previewId}/links/${link.id}`,
        ownerToken,
      );
      assert.equal(JSON.parse(twice.text).code, 'preview_link_not_found');
    });

    it("keeps another team's members out", async () => {
      for (const [method, path] of [
        ['GET', `/api/v1/projects/petstore/deploys/${previewId}/preview-access`],
        ['POST', `/api/v1/projects/petstore/deploys/${previewId}/links`],
        ['GET', `/api/v1/projects/petstore/deploys/${previewId}/links`],
      ] as const) {
        const answer = await platform(
          method,
          path,
          outsiderToken,
          method === 'POST' ? { expiresIn: 600 } : undefined,
        );
        assert.equal(answer.status, 404, `${method} ${path}`);
        assert.equal(JSON.parse(answer.text).code, 'project_not_found');
      }
      const session = await signIn('outsider@x.test', 'outsider password 1');
      const link = await requestAs(
        edge.httpPort,
        'platform.test',
        `/api/v1/projects/petstore/deploys/${previewId}/preview-access`,
        { headers: { cookie: session } },
      );
      assert.equal(link.status, 404);
      assert.equal(link.headers.location, undefined);
    });

    it('answers 409 deploy_not_preview for a live deploy', async () => {
      const answer = await platform(
        'POST',
        `/api/v1/projects/petstore/deploys/${liveId}/links`,
        ownerToken,
        {},
      );
      assert.equal(answer.status, 409);
      assert.equal(JSON.parse(answer.text).code, 'deploy_not_preview');
    });

    it('serves the preview over HTTPS with a certificate for its name', async () => {
      const session = await signIn('member@x.test', 'member password 1');
      const location = await handOff(session);
      const secure = (path: string, headers: Record<string, string> = {}) =>
        tlsGet(edge.httpsPort, previewHostName, path, { ca: rootPem, headers });
      const exchanged = await secure(pathOf(location));
      assert.equal(exchanged.peer.subjectAltName, `DNS:${previewHostName}`);
      assert.equal(exchanged.status, 303);
      assert.match(
        String(exchanged.headers['set-cookie']),
        /^__Host-kennel_preview=kpc_[\w-]{43}; Max-Age=43200; Path=\/; HttpOnly; Secure; SameSite=Lax$/,
      );
      const cookie = cookiePair(exchanged);
      const document = await secure('/openapi.json', { cookie });
      assert.equal(document.status, 200);
      assert.equal(JSON.parse(document.text).info.version, '2.0.0-preview');
      // Each scheme reads its own cookie: the HTTPS one is not taken over plain HTTP.
      assert.equal((await preview('/openapi.json', { cookie })).status, 401);
    });

    it('goes live when promoted, and stays at its preview address', async () => {
      await promoteDeploy(p.ctx, ownerActor, 'petstore', previewId);
      const live = await requestAs(edge.httpPort, 'petstore.platform.test', '/openapi.json');
      assert.equal(JSON.parse(live.text).info.version, '2.0.0-preview');
      calls.length = 0;
      await requestAs(edge.httpPort, 'petstore.platform.test', '/api/gadgets');
      assert.deepEqual(calls, ['preview /gadgets'], 'the promoted deploy brings its origin');
      assert.equal((await preview('/openapi.json')).status, 401, 'its preview address stays private');
      const session = await signIn('member@x.test', 'member password 1');
      const { exchanged } = await handOver(session);
      const page = await preview('/', { cookie: cookiePair(exchanged), accept: 'text/html' });
      assert.match(page.text, /<strong>Preview of deploy #2 — now live \(promoted\)\.<\/strong>/);
    });

    it('refuses new slugs with "--", which preview addresses use', async () => {
      const answer = await platform('POST', '/api/v1/projects', ownerToken, {
        teamId,
        slug: 'shop--2',
        name: 'x',
        originUrl: 'https://api.example.com',
      });
      assert.equal(answer.status, 400, answer.text);
      assert.match(JSON.parse(answer.text).message, /no "--", which preview addresses use/);
    });
  });
}

for (const dialect of testDialects()) {
  describe(`previews at a real platform domain (${dialect})`, () => {
    let site: EdgeSite;
    let edge: TestEdge;
    let previewId: number;

    before(async () => {
      site = await startEdgeSite(dialect, {
        env: { PLATFORM_DOMAIN: 'kennel.example.com' },
        now: true,
        projects: [
          { slug: 'petstore', name: 'Petstore', originUrl: 'https://api.example.com', document: false },
        ],
      });
      const certificates = await internalCertificates(site.p);
      previewId = (
        await deployProject(site.p.ctx, site.owner, 'petstore', { document: PREVIEW_DOCUMENT, preview: true })
      ).id;
      edge = await startPreviewEdge(site.p, certificates);
    });

    after(() => closeAll(edge, site));

    it('sends plain HTTP to HTTPS before any token or cookie is read, for any preview-shaped name', async () => {
      for (const host of [
        `petstore--${previewId}.kennel.example.com`,
        'petstore--99999.kennel.example.com',
      ]) {
        const answer = await requestAs(edge.httpPort, host, '/?kennel_preview=kpl_secret', {
          headers: { cookie: 'kennel_preview=kpc_x' },
        });
        assert.equal(answer.status, 308, host);
        assert.equal(answer.headers.location, `https://${host}:${edge.httpsPort}/?kennel_preview=kpl_secret`);
        assert.equal(answer.headers['set-cookie'], undefined);
      }
    });
  });
}
