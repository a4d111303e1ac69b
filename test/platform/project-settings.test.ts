import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildPlatformApp } from '../../src/main/platform-app.ts';
import { createToken } from '../../src/platform/accounts/credentials.ts';
import { addMember, createTeam } from '../../src/platform/accounts/teams.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import type { Change } from '../../src/platform/changes.ts';
import { addDomain } from '../../src/platform/domains/add-domain.ts';
import { applyDomainConfig } from '../../src/platform/domains/apply-domain-config.ts';
import { verifyDomain } from '../../src/platform/domains/verify-domain.ts';
import { deployProject } from '../../src/platform/projects/deploys.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import { type Client, bearerClient as client } from '../support/api-scenario.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import type { TestDns } from '../support/dns.ts';
import { type PlainEdge, startPlainEdge } from '../support/edge.ts';
import { requestAs } from '../support/http.ts';
import { seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';
import { internalCertificates } from '../support/platform-certificates.ts';
import { dnsEnv, startZones } from '../support/platform-dns.ts';

const doc = (version: string) =>
  JSON.stringify({
    openapi: '3.0.3',
    info: { title: 'Shop', version },
    paths: { '/ping': { get: { responses: { '200': { description: 'pong' } } } } },
  });

for (const dialect of testDialects()) {
  describe(`project settings: rename, origin, delete (${dialect})`, () => {
    let dns: TestDns;
    let p: TestPlatform;
    let app: FastifyInstance;
    let edge: PlainEdge;
    /** With API tokens: the team's owner and member, someone of another team, a platform admin. */
    let owner: Client, member: Client, stranger: Client, admin: Client;
    const changes: Change[] = [];
    let projectId = 0;

    before(async () => {
      dns = await startZones({
        'platform.test': [{ name: 'shop', type: 'A', value: '127.0.0.1' }],
        'example.test': ['www', 'old'].map((name) => ({ name, type: 'CNAME', value: 'shop.platform.test' })),
      });
      p = await startPlatformContext(dialect, dnsEnv(dns));
      const seeded = await seedTeam(p.ctx);
      const memberActor = await createUser(p.ctx, { email: 'member@x.test', password: 'member password 1' });
      await addMember(p.ctx, seeded.owner, seeded.team.id, 'member@x.test', 'member');
      const strangerActor = await createUser(p.ctx, {
        email: 'stranger@x.test',
        password: 'stranger pass 1',
      });
      await createTeam(p.ctx, strangerActor, 'Elsewhere');

      ({ id: projectId } = await createProject(p.ctx, seeded.owner, {
        teamId: seeded.team.id,
        slug: 'shop',
        name: 'Shop',
        originUrl: 'https://api.shop-example.test',
      }));
      await deployProject(p.ctx, seeded.owner, 'shop', { document: doc('1') });
      await deployProject(p.ctx, seeded.owner, 'shop', { document: doc('2') });
      await deployProject(p.ctx, seeded.owner, 'shop', { document: doc('3'), preview: true });
      for (const host of ['www.example.test', 'old.example.test']) {
        await addDomain(p.ctx, seeded.owner, 'shop', host);
        await verifyDomain(p.ctx, seeded.owner, 'shop', host);
      }
      await applyDomainConfig(
        p.ctx,
        seeded.owner,
        'shop',
        'domains:\n  primary: www.example.test\n  redirects:\n    - from: old.example.test\n      to: www.example.test\n',
      );
      const { issueDue } = await internalCertificates(p);
      assert.deepEqual((await issueDue()).sort(), ['old.example.test', 'www.example.test']);

      app = buildPlatformApp(p.ctx);
      await app.ready();
      owner = client(app, (await createToken(p.ctx, seeded.owner, 't')).token);
      member = client(app, (await createToken(p.ctx, memberActor, 't')).token);
      stranger = client(app, (await createToken(p.ctx, strangerActor, 't')).token);
      admin = client(app, (await createToken(p.ctx, seeded.admin, 't')).token);
      edge = await startPlainEdge(p);
      p.ctx.changes.subscribe((change) => changes.push(change));
    });
    after(() => closeAll(edge, app, p, dns));

    it('lets a member rename the project; the slug and its address stay', async () => {
      const renamed = await member('PATCH', '/api/v1/projects/shop', { name: '  Shop front ' });
      assert.equal(renamed.status, 200);
      assert.equal(renamed.body.name, 'Shop front');
      assert.equal(renamed.body.slug, 'shop');
      assert.equal(renamed.body.defaultHost, 'shop.platform.test');
      assert.equal((await owner('GET', '/api/v1/projects/shop')).body.name, 'Shop front');

      const blank = await member('PATCH', '/api/v1/projects/shop', { name: '   ' });
      assert.deepEqual(blank.body, {
        code: 'validation_failed',
        message: 'The name is blank: give the project a name to show.',
        status: 400,
      });
      const nothing = await member('PATCH', '/api/v1/projects/shop', {});
      assert.equal(nothing.status, 400);
      assert.equal(nothing.body.code, 'validation_failed');
      const slug = await member('PATCH', '/api/v1/projects/shop', { slug: 'other' });
      assert.equal(slug.status, 400);
      assert.equal(slug.body.code, 'validation_failed');
      assert.equal((await owner('GET', '/api/v1/projects/shop')).body.slug, 'shop');
    });

    it('changes the origin with the checks of creation, and tells the edge', async () => {
      changes.length = 0;
      const moved = await member('PATCH', '/api/v1/projects/shop', {
        originUrl: 'https://api2.shop-example.test/',
      });
      assert.equal(moved.status, 200);
      assert.equal(moved.body.originUrl, 'https://api2.shop-example.test');
      assert.deepEqual(changes, [{ kind: 'projects', projectId }]);

      const privateOrigin = await owner('PATCH', '/api/v1/projects/shop', {
        name: 'Not applied',
        originUrl: 'http://127.0.0.1:8080',
      });
      assert.deepEqual(privateOrigin.body, {
        code: 'origin_not_allowed',
        message:
          'originUrl http://127.0.0.1:8080 points at a loopback, private or reserved address (127.0.0.1); projects may reach the platform\'s own network only with a grant. Use a public address, or ask a platform admin to grant team "Shop" the origin http://127.0.0.1:8080.',
        status: 422,
      });
      const credentials = await owner('PATCH', '/api/v1/projects/shop', {
        originUrl: 'https://me:secret@api.example.test',
      });
      assert.deepEqual(credentials.body, {
        code: 'validation_failed',
        message:
          'originUrl "https://me:secret@api.example.test" carries a user name or password (before the @): give the origin\'s address alone, e.g. https://api.example.com; Kennel does not send credentials to origins.',
        status: 400,
      });
      const ftp = await owner('PATCH', '/api/v1/projects/shop', { originUrl: 'ftp://files.example.test' });
      assert.deepEqual(ftp.body, {
        code: 'validation_failed',
        message: 'originUrl must be http:// or https:// (got ftp:).',
        status: 400,
      });
      const unchanged = await owner('GET', '/api/v1/projects/shop');
      assert.equal(unchanged.body.originUrl, 'https://api2.shop-example.test');
      assert.equal(unchanged.body.name, 'Shop front');
    });

    it('shows nothing to another team and refuses deletion to a member', async () => {
      for (const [method, url, body] of [
        ['PATCH', '/api/v1/projects/shop', { name: 'Mine now' }],
        ['GET', '/api/v1/projects/shop/deletion', undefined],
        ['DELETE', '/api/v1/projects/shop', undefined],
      ] as const) {
        const answer = await stranger(method, url, body);
        assert.deepEqual(answer.body, {
          code: 'project_not_found',
          message: 'No project "shop" is visible to you: check the slug against the list of your projects.',
          status: 404,
        });
      }
      const refused = await member('DELETE', '/api/v1/projects/shop');
      assert.deepEqual(refused.body, {
        code: 'forbidden',
        message: 'Only owners of team "Shop" can delete project shop. Ask one of them.',
        status: 403,
      });
      assert.equal((await owner('GET', '/api/v1/projects/shop')).status, 200);
    });

    it('deletes the project with its domains, certificates and deploys; the edge stops serving it', async () => {
      // Served before: the default address sends its pages to the primary domain, which serves
      // them; the other domain redirects to it.
      const before = await Promise.all(
        ['shop.platform.test', 'www.example.test', 'old.example.test'].map(async (host) => {
          const answer = await requestAs(edge.port, host, '/');
          return [host, answer.status, answer.headers.location ?? null];
        }),
      );
      assert.deepEqual(before, [
        ['shop.platform.test', 308, `http://www.example.test:${edge.port}/`],
        ['www.example.test', 200, null],
        ['old.example.test', 301, `http://www.example.test:${edge.port}/`],
      ]);

      const expected = { slug: 'shop', domains: 2, certificates: 2, deploys: 3 };
      assert.deepEqual((await member('GET', '/api/v1/projects/shop/deletion')).body, expected);
      const id = projectId;
      const domainIds = (
        await p.ctx.db.selectFrom('domains').select('id').where('project_id', '=', id).execute()
      ).map((d) => d.id);
      changes.length = 0;

      const deleted = await owner('DELETE', '/api/v1/projects/shop');
      assert.equal(deleted.status, 200);
      assert.deepEqual(deleted.body, expected);
      assert.deepEqual(changes, [
        { kind: 'projects', projectId },
        { kind: 'deploys', projectId },
      ]);

      for (const table of ['deploys', 'domains', 'redirects', 'publications', 'preview_links'] as const) {
        const rows = await p.ctx.db
          .selectFrom(table)
          .select('project_id')
          .where('project_id', '=', id)
          .execute();
        assert.deepEqual(rows, [], `${table} keeps rows of the deleted project`);
      }
      assert.deepEqual(await p.ctx.db.selectFrom('certificates').select('hostname').execute(), []);
      assert.deepEqual(
        await p.ctx.db
          .selectFrom('certificate_jobs')
          .select('domain_id')
          .where('domain_id', 'in', domainIds)
          .execute(),
        [],
      );
      assert.deepEqual(
        await p.ctx.db
          .selectFrom('domain_events')
          .select('domain_id')
          .where('domain_id', 'in', domainIds)
          .execute(),
        [],
      );

      for (const host of ['shop.platform.test', 'www.example.test', 'old.example.test']) {
        const answer = await requestAs(edge.port, host, '/api/ping', {
          headers: { accept: 'application/json' },
        });
        assert.equal(answer.status, 404, host);
        assert.equal((JSON.parse(answer.text) as { code: string }).code, 'host_not_found', host);
      }
      const gone = await owner('GET', '/api/v1/projects/shop');
      assert.equal(gone.status, 404);
      assert.equal(gone.body.code, 'project_not_found');
      const again = await owner('DELETE', '/api/v1/projects/shop');
      assert.equal(again.body.code, 'project_not_found');
    });

    it('frees the slug, and lets a platform admin delete any project', async () => {
      const teamId = Number(
        (await p.ctx.db.selectFrom('teams').select('id').where('name', '=', 'Shop').executeTakeFirstOrThrow())
          .id,
      );
      const made = await owner('POST', '/api/v1/projects', {
        teamId,
        slug: 'shop',
        name: 'Shop again',
        originUrl: 'https://api.shop-example.test',
      });
      assert.equal(made.status, 201);
      const deleted = await admin('DELETE', '/api/v1/projects/shop');
      assert.deepEqual(deleted.body, { slug: 'shop', domains: 0, certificates: 0, deploys: 0 });
    });
  });
}
