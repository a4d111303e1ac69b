import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { parse as parseYaml } from 'yaml';
import { diffDocuments } from '../../src/lib/openapi-diff/index.ts';
import { createToken } from '../../src/platform/accounts/credentials.ts';
import { addMember, createTeam } from '../../src/platform/accounts/teams.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import { listPublications } from '../../src/platform/publishing/index.ts';
import { startWebhookWorker } from '../../src/platform/webhooks/index.ts';
import { type Client, bearerClient as client, startAppPlatform } from '../support/api-scenario.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import { type PlainEdge, startPlainEdge } from '../support/edge.ts';
import { requestAs } from '../support/http.ts';
import { seedTeam, type TestPlatform } from '../support/platform.ts';
import { beforeMigration } from '../support/platform-migrations.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

const get = (description: string) => ({ get: { responses: { '200': { description } } } });
const doc = (paths: Record<string, unknown>) => ({
  openapi: '3.0.3',
  info: { title: 'Shop', version: '1.0.0' },
  paths,
});
/** Three versions of one API: V2 adds an operation; V3 removes one (breaking) and keeps V2's. */
const V1 = doc({ '/pets': get('pets'), '/pets/{petId}': get('a pet') });
const V2 = doc({ '/pets': get('pets'), '/pets/{petId}': get('a pet'), '/toys': get('toys') });
const V3 = doc({ '/pets': get('pets'), '/toys': get('toys') });
const INVALID = JSON.stringify({ openapi: '3.0.3', info: { title: 'x' }, paths: {} });
/**
 * The changes as a deploy's answer carries them: each breaking one of an operation with its
 * traffic of the last 7 days (none here; test/platform/traffic-gate.test.ts has calls).
 */
const notCalled = (changes: ReturnType<typeof diffDocuments>) =>
  changes.map((c) =>
    c.level === 'breaking' && c.operation ? { ...c, traffic: { requests: 0, callers: 0 } } : c,
  );

for (const dialect of testDialects()) {
  describe(`deploys: numbers, authors, changes, the gate, previews, promotion, publications (${dialect})`, () => {
    let p: TestPlatform;
    let app: FastifyInstance;
    let edge: PlainEdge;
    let receiver: WebhookReceiver;
    let worker: ReturnType<typeof startWebhookWorker>;
    /** The team's owner and member, and someone of another team, with API tokens. */
    let owner: Client, member: Client, outsider: Client;
    let projectId: number;
    const ids: Record<string, number> = {};
    const deploys = '/api/v1/projects/shop/deploys';
    /** The paths the published site serves in its /openapi.json, through a real edge. */
    const servedPaths = async () => {
      const answer = await requestAs(edge.port, 'shop.platform.test', '/openapi.json');
      assert.equal(answer.status, 200, answer.text);
      return Object.keys(JSON.parse(answer.text).paths as object).sort();
    };
    const publications = async () =>
      (await listPublications(p.ctx.db, projectId)).map((x) => [x.deployNumber, x.publishedBy, x.breaking]);
    const published = async (count: number) => {
      await worker.runOnce();
      await receiver.waitFor(count);
      assert.deepEqual(receiver.rejected, []);
      return receiver.received.at(-1)?.body.data;
    };

    before(async () => {
      ({ p, app } = await startAppPlatform(dialect, { WEBHOOK_TARGETS: 'private' }));
      const seeded = await seedTeam(p.ctx);
      const memberActor = await createUser(p.ctx, { email: 'member@x.test', password: 'member password 1' });
      await addMember(p.ctx, seeded.owner, seeded.team.id, 'member@x.test', 'member');
      const outsiderActor = await createUser(p.ctx, { email: 'outsider@x.test', password: 'outsider pw 1' });
      await createTeam(p.ctx, outsiderActor, 'Elsewhere');
      owner = client(app, (await createToken(p.ctx, seeded.owner, 't')).token);
      member = client(app, (await createToken(p.ctx, memberActor, 't')).token);
      outsider = client(app, (await createToken(p.ctx, outsiderActor, 't')).token);
      // Another project's deploy first, so global ids and per-project numbers differ.
      for (const slug of ['other', 'shop']) {
        await createProject(p.ctx, seeded.owner, {
          teamId: seeded.team.id,
          slug,
          name: slug,
          originUrl: 'http://127.0.0.1:1',
        });
      }
      const other = await owner('POST', '/api/v1/projects/other/deploys', { document: JSON.stringify(V1) });
      assert.deepEqual([other.status, other.body.number], [201, 1]);
      const row = await p.ctx.db
        .selectFrom('projects')
        .select('id')
        .where('slug', '=', 'shop')
        .executeTakeFirstOrThrow();
      projectId = Number(row.id);
      receiver = await new WebhookReceiver(p.clock).start();
      const hook = await owner('PUT', `/api/v1/teams/${seeded.team.id}/webhook`, { url: receiver.url });
      assert.equal(hook.status, 201, hook.text);
      receiver.secret = String(hook.body.secret);
      worker = startWebhookWorker(p.ctx, {
        nodeId: 'node-a',
        start: false,
        onError: (error) => {
          throw error;
        },
      });
      edge = await startPlainEdge(p);
    });
    after(() => closeAll(edge, worker, receiver, app, p));

    it('numbers deploys per project from 1, records who made them, and lists the changes against the live deploy', async () => {
      const first = await owner('POST', deploys, { document: JSON.stringify(V1) });
      assert.equal(first.status, 201, first.text);
      assert.deepEqual(
        [first.body.number, first.body.createdBy, first.body.changes, first.body.breaking, first.body.active],
        [1, 'owner@x.test', [], false, true],
      );
      assert.notEqual(first.body.id, 1, 'the id is global; the number is the project’s');
      ids.v1 = Number(first.body.id);
      assert.deepEqual((await published(1)) as unknown, {
        project: 'shop',
        deploy: { id: ids.v1, number: 1, createdBy: 'owner@x.test' },
        publishedBy: 'owner@x.test',
        changes: [],
        breaking: false,
      });

      const second = await member('POST', deploys, { document: JSON.stringify(V2) });
      assert.equal(second.status, 201, second.text);
      ids.v2 = Number(second.body.id);
      const added = diffDocuments(V1, V2);
      assert.ok(added.length > 0 && added.every((c) => c.level !== 'breaking'), JSON.stringify(added));
      assert.deepEqual(
        [second.body.number, second.body.createdBy, second.body.changes, second.body.breaking],
        [2, 'member@x.test', added, false],
      );
      assert.deepEqual(await servedPaths(), ['/pets', '/pets/{petId}', '/toys']);
      const data = await published(2);
      assert.deepEqual([data?.changes, data?.breaking, data?.publishedBy], [added, false, 'member@x.test']);
      assert.deepEqual(await publications(), [
        [2, 'member@x.test', false],
        [1, 'owner@x.test', false],
      ]);
    });

    it('refuses a breaking deploy with 409 breaking_changes and its change list; nothing is stored and the site still serves the old document', async () => {
      const refused = await owner('POST', deploys, { document: JSON.stringify(V3) });
      assert.equal(refused.status, 409, refused.text);
      assert.equal(refused.body.code, 'breaking_changes');
      const breaking = diffDocuments(V2, V3);
      assert.deepEqual(refused.body.changes, notCalled(breaking));
      assert.ok(breaking.some((c) => c.level === 'breaking' && c.operation === 'GET /pets/{petId}'));
      assert.match(String(refused.body.message), /GET \/pets\/\{petId\}/);
      assert.match(String(refused.body.message), /allowBreaking: true/);
      const listed = await owner('GET', deploys);
      assert.deepEqual(
        listed.body.map((d) => [(d as { number: number }).number, (d as { active: boolean }).active]),
        [
          [2, true],
          [1, false],
        ],
      );
      assert.deepEqual(await servedPaths(), ['/pets', '/pets/{petId}', '/toys']);
      assert.equal((await publications()).length, 2);
    });

    it('a dry run answers the problems or the changes and stores nothing', async () => {
      const dry = await owner('POST', deploys, { document: JSON.stringify(V3), dryRun: true });
      assert.equal(dry.status, 200, dry.text);
      assert.deepEqual(
        [dry.body.valid, dry.body.problems, dry.body.changes, dry.body.breaking],
        [true, [], notCalled(diffDocuments(V2, V3)), true],
      );
      const invalid = await owner('POST', deploys, { document: INVALID, dryRun: true });
      assert.equal(invalid.status, 200, invalid.text);
      assert.equal(invalid.body.valid, false);
      assert.equal((invalid.body.problems as string[]).length, 1);
      assert.match(String((invalid.body.problems as string[])[0]), /version/);
      const [detail] = invalid.body.problemDetails as { pointer: string; message: string }[];
      assert.equal(detail?.pointer, '/info');
      assert.match(String(detail?.message), /version/);
      assert.deepEqual([invalid.body.changes, invalid.body.breaking], [[], false]);
      assert.equal((await owner('GET', deploys)).body.length, 2, 'nothing stored');
    });

    it('a preview is stored with its changes against the live deploy and changes nothing live', async () => {
      const preview = await owner('POST', deploys, { document: JSON.stringify(V3), preview: true });
      assert.equal(preview.status, 201, preview.text);
      ids.preview = Number(preview.body.id);
      assert.deepEqual(
        [preview.body.number, preview.body.preview, preview.body.active, preview.body.breaking],
        [3, true, false, true],
      );
      assert.deepEqual(preview.body.changes, notCalled(diffDocuments(V2, V3)));
      assert.deepEqual(await servedPaths(), ['/pets', '/pets/{petId}', '/toys']);
      assert.equal((await publications()).length, 2);
      assert.equal((await owner('GET', '/api/v1/projects/shop')).body.activeDeployId, ids.v2);
    });

    it('allowBreaking publishes a breaking deploy: the edge serves it, a publication and deploy.published record it', async () => {
      const forced = await owner('POST', deploys, { document: JSON.stringify(V3), allowBreaking: true });
      assert.equal(forced.status, 201, forced.text);
      ids.v3 = Number(forced.body.id);
      assert.deepEqual([forced.body.number, forced.body.active, forced.body.breaking], [4, true, true]);
      assert.deepEqual(await servedPaths(), ['/pets', '/toys']);
      const data = await published(3);
      assert.deepEqual(data?.deploy, { id: ids.v3, number: 4, createdBy: 'owner@x.test' });
      assert.deepEqual([data?.changes, data?.breaking], [diffDocuments(V2, V3), true]);
      assert.deepEqual((await publications())[0], [4, 'owner@x.test', true]);
    });

    it('promotes an earlier deploy: the gate asks for allowBreaking, then the edge serves it again', async () => {
      const promote = `${deploys}/${ids.v1}/promote`;
      const back = diffDocuments(V3, V1);
      assert.ok(
        back.some((c) => c.level === 'breaking' && c.operation === 'GET /toys'),
        JSON.stringify(back),
      );
      const refused = await member('POST', promote, {});
      assert.deepEqual([refused.status, refused.body.code], [409, 'breaking_changes']);
      assert.deepEqual(refused.body.changes, notCalled(back));
      assert.match(String(refused.body.message), /Promoting deploy #1/);
      assert.deepEqual(await servedPaths(), ['/pets', '/toys']);

      const promoted = await member('POST', promote, { allowBreaking: true });
      assert.equal(promoted.status, 200, promoted.text);
      const { deploy, publication } = promoted.body as unknown as {
        deploy: Record<string, unknown>;
        publication: Record<string, unknown>;
      };
      assert.deepEqual(
        [deploy.id, deploy.number, deploy.active, deploy.createdBy],
        [ids.v1, 1, true, 'owner@x.test'],
      );
      assert.deepEqual(
        [publication.deployId, publication.deployNumber, publication.publishedBy, publication.breaking],
        [ids.v1, 1, 'member@x.test', true],
      );
      assert.deepEqual(publication.changes, notCalled(back));
      assert.deepEqual(await servedPaths(), ['/pets', '/pets/{petId}']);
      const data = await published(4);
      assert.deepEqual(data?.deploy, { id: ids.v1, number: 1, createdBy: 'owner@x.test' });
      assert.deepEqual([data?.publishedBy, data?.changes, data?.breaking], ['member@x.test', back, true]);
      assert.deepEqual(receiver.types(), Array(4).fill('deploy.published'));
      assert.deepEqual(await publications(), [
        [1, 'member@x.test', true],
        [4, 'owner@x.test', true],
        [2, 'member@x.test', false],
        [1, 'owner@x.test', false],
      ]);

      const again = await owner('POST', promote, {});
      assert.deepEqual([again.status, again.body.code], [409, 'deploy_already_live']);
      const failed = await owner('POST', deploys, { document: INVALID });
      assert.deepEqual([failed.status, failed.body.status, failed.body.number], [201, 'failed', 5]);
      const notPromotable = await owner('POST', `${deploys}/${failed.body.id}/promote`, {
        allowBreaking: true,
      });
      assert.deepEqual([notPromotable.status, notPromotable.body.code], [409, 'deploy_failed']);
      // A preview is promoted like any deploy.
      const preview = await owner('POST', `${deploys}/${ids.preview}/promote`, { allowBreaking: true });
      assert.equal(preview.status, 200, preview.text);
      assert.deepEqual(await servedPaths(), ['/pets', '/toys']);
      await published(5);
    });

    it('serves a deploy’s document as JSON or YAML, and compares any two deploys', async () => {
      const json = await owner('GET', `${deploys}/${ids.v1}/document`);
      assert.equal(json.status, 200);
      assert.match(json.type, /^application\/json/);
      assert.deepEqual(json.body, V1);
      const yaml = await owner('GET', `${deploys}/${ids.v2}/document?format=yaml`);
      assert.equal(yaml.status, 200);
      assert.match(yaml.type, /^application\/yaml/);
      assert.deepEqual(parseYaml(yaml.text), V2);
      const compared = await owner('GET', `${deploys}/${ids.v3}/changes?against=${ids.v1}`);
      assert.deepEqual(compared.body, {
        deployId: ids.v3,
        againstId: ids.v1,
        changes: diffDocuments(V1, V3),
        breaking: true,
      });
      // Against the live deploy (the promoted preview, V3) by default.
      const live = await owner('GET', `${deploys}/${ids.v2}/changes`);
      assert.deepEqual(live.body, {
        deployId: ids.v2,
        againstId: ids.preview,
        changes: diffDocuments(V3, V2),
        breaking: false,
      });
      const failedId = (await owner('GET', deploys)).body.find(
        (d) => (d as { status: string }).status === 'failed',
      ) as {
        id: number;
      };
      const none = await owner('GET', `${deploys}/${failedId.id}/document`);
      assert.deepEqual([none.status, none.body.code], [409, 'deploy_failed']);
      const missing = await owner('GET', `${deploys}/999999/changes`);
      assert.deepEqual([missing.status, missing.body.code], [404, 'deploy_not_found']);
    });

    it('keeps other teams out of every deploy operation', async () => {
      const answers = await Promise.all([
        outsider('POST', deploys, { document: JSON.stringify(V2), dryRun: true }),
        outsider('POST', `${deploys}/${ids.v2}/promote`, { allowBreaking: true }),
        outsider('GET', `${deploys}/${ids.v2}/document`),
        outsider('GET', `${deploys}/${ids.v2}/changes?against=${ids.v1}`),
      ]);
      assert.deepEqual(
        answers.map((a) => [a.status, a.body.code]),
        Array(4).fill([404, 'project_not_found']),
      );
      assert.deepEqual(await servedPaths(), ['/pets', '/toys'], 'unchanged by them');
    });
  });

  describe(`deploy numbers under concurrency, and the changelog under retention (${dialect})`, () => {
    let p: TestPlatform;
    let owner: ReturnType<typeof client>;
    let app: FastifyInstance;
    before(async () => {
      ({ p, app } = await startAppPlatform(dialect, { DEPLOY_RETENTION: '1' }));
      const seeded = await seedTeam(p.ctx);
      owner = client(app, (await createToken(p.ctx, seeded.owner, 't')).token);
      await createProject(p.ctx, seeded.owner, {
        teamId: seeded.team.id,
        slug: 'shop',
        name: 'Shop',
        originUrl: 'http://127.0.0.1:1',
      });
    });
    after(() => closeAll(app, p));

    it('numbers deploys sent at once 1 to N, each live in turn (the same document: nothing breaks whatever the order); pruned deploys keep their publications', async () => {
      const answers = await Promise.all(
        Array(5)
          .fill(V2)
          .map((d) => owner('POST', '/api/v1/projects/shop/deploys', { document: JSON.stringify(d) })),
      );
      assert.deepEqual(
        answers.map((a) => a.status),
        Array(5).fill(201),
      );
      assert.deepEqual(answers.map((a) => Number(a.body.number)).sort(), [1, 2, 3, 4, 5]);
      const kept = await owner('GET', '/api/v1/projects/shop/deploys');
      assert.deepEqual(
        kept.body.map((d) => (d as { number: number }).number),
        [5],
        'DEPLOY_RETENTION=1 keeps the live deploy only',
      );
      const project = await p.ctx.db.selectFrom('projects').select('id').executeTakeFirstOrThrow();
      const changelog = await listPublications(p.ctx.db, Number(project.id));
      assert.deepEqual(
        changelog.map((x) => x.deployNumber),
        [5, 4, 3, 2, 1],
      );
      assert.equal(changelog.at(-1)?.changes.length, 0, 'the first has no changes');
      const pruned = changelog.at(-1)?.deployId;
      const gone = await owner('GET', `/api/v1/projects/shop/deploys/${pruned}`);
      assert.deepEqual([gone.status, gone.body.code], [404, 'deploy_not_found']);
    });
  });

  describe(`migration 0009_deploy_changes on existing deploys (${dialect})`, () => {
    it('numbers deploys per project in id order and gives each live deploy a publication without changes', async () => {
      await beforeMigration(dialect, '0009', async (db, migrateRest) => {
        const at = '2026-11-22T12:00:00.000Z';
        const no = dialect === 'postgres' ? sql`false` : sql`0`;
        await sql`INSERT INTO users (email, password_hash, is_admin, created_at) VALUES ('pat@x.test', 'h', ${no}, ${at})`.execute(
          db,
        );
        await sql`INSERT INTO teams (name, plan, created_at) VALUES ('T', 'free', ${at})`.execute(db);
        for (const slug of ['a', 'b', 'c']) {
          await sql`INSERT INTO projects (team_id, slug, name, origin_url, created_at) SELECT id, ${slug}, ${slug}, 'http://o', ${at} FROM teams`.execute(
            db,
          );
        }
        const deploy = (slug: string, status: string, createdAt: string) =>
          sql`INSERT INTO deploys (project_id, status, origin_url, document, source_format, created_by, created_at)
            SELECT p.id, ${status}, 'http://o', ${status === 'succeeded' ? '{}' : null}, 'json', (SELECT MIN(id) FROM users), ${createdAt}
            FROM projects p WHERE p.slug = ${slug}`.execute(db);
        await deploy('a', 'succeeded', '2026-11-01T00:00:00.000Z');
        await deploy('b', 'succeeded', '2026-11-02T00:00:00.000Z');
        await deploy('a', 'failed', '2026-11-03T00:00:00.000Z');
        await deploy('a', 'succeeded', '2026-11-04T00:00:00.000Z');
        await deploy('c', 'failed', '2026-11-05T00:00:00.000Z');
        // a's live deploy is its third (id 4), b's its only one; c has none live.
        await sql`UPDATE projects SET active_deploy_id = (SELECT MAX(d.id) FROM deploys d WHERE d.project_id = projects.id AND d.status = 'succeeded')`.execute(
          db,
        );
        await migrateRest();
        const rows = await db
          .selectFrom('deploys')
          .innerJoin('projects', 'projects.id', 'deploys.project_id')
          .select([
            'projects.slug',
            'deploys.id',
            'deploys.number',
            'deploys.preview',
            'deploys.changes',
            'deploys.breaking',
          ])
          .orderBy('deploys.id')
          .execute();
        assert.deepEqual(
          rows.map((r) => [
            r.slug,
            Number(r.id),
            Number(r.number),
            Number(r.preview),
            r.changes,
            Number(r.breaking),
          ]),
          [
            ['a', 1, 1, 0, null, 0],
            ['b', 2, 1, 0, null, 0],
            ['a', 3, 2, 0, null, 0],
            ['a', 4, 3, 0, null, 0],
            ['c', 5, 1, 0, null, 0],
          ],
        );
        const projects = await db.selectFrom('projects').select(['id', 'slug']).orderBy('id').execute();
        const changelog = async (slug: string) =>
          (await listPublications(db, Number(projects.find((x) => x.slug === slug)?.id))).map((x) => [
            x.deployId,
            x.deployNumber,
            x.publishedAt,
            x.publishedBy,
            x.changes,
            x.breaking,
          ]);
        assert.deepEqual(await changelog('a'), [[4, 3, '2026-11-04T00:00:00.000Z', 'pat@x.test', [], false]]);
        assert.deepEqual(await changelog('b'), [[2, 1, '2026-11-02T00:00:00.000Z', 'pat@x.test', [], false]]);
        assert.deepEqual(await changelog('c'), []);
      });
    });
  });
}
