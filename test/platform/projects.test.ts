import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  actorForToken,
  createSession,
  createToken,
  revokeToken,
  sessionFor,
} from '../../src/platform/accounts/credentials.ts';
import { addMember, createTeam, setPlan, teamFor } from '../../src/platform/accounts/teams.ts';
import { authenticate, createUser } from '../../src/platform/accounts/users.ts';
import type { Actor } from '../../src/platform/context.ts';
import { deployProject, listDeploys } from '../../src/platform/projects/deploys.ts';
import { createProject, listProjects, projectFor } from '../../src/platform/projects/projects.ts';
import { testDialects } from '../support/databases.ts';
import { startPlatformContext, type TestPlatform } from '../support/platform.ts';

const VALID = JSON.stringify({
  openapi: '3.0.3',
  info: { title: 'Mini', version: '1.0.0' },
  paths: { '/ping': { get: { responses: { '200': { description: 'pong' } } } } },
});
const VALID_YAML = `openapi: 3.0.3
info:
  title: Mini
  version: 1.0.0
paths:
  /ping:
    get:
      responses:
        "200":
          description: pong
`;

async function rejects(promise: Promise<unknown>, code: string, status: number): Promise<void> {
  await assert.rejects(promise, (error: { code?: string; status?: number }) => {
    assert.equal(error.code, code);
    assert.equal(error.status, status);
    return true;
  });
}

for (const dialect of testDialects()) {
  describe(`accounts, teams, projects and deploys (${dialect})`, () => {
    let p: TestPlatform;
    let admin: Actor;
    let alice: Actor;
    let bob: Actor;
    before(async () => {
      p = await startPlatformContext(dialect);
      admin = await createUser(p.ctx, {
        email: 'Admin@Example.test',
        password: 'correct horse battery',
        isAdmin: true,
      });
      alice = await createUser(p.ctx, { email: 'alice@example.test', password: 'alice password 1' });
      bob = await createUser(p.ctx, { email: 'bob@example.test', password: 'bob password 12' });
    });
    after(() => p.close());

    it('signs in with a password and refuses a wrong one without saying which part was wrong', async () => {
      assert.deepEqual(await authenticate(p.ctx, 'admin@example.test', 'correct horse battery'), admin);
      await rejects(authenticate(p.ctx, 'admin@example.test', 'wrong'), 'invalid_credentials', 401);
      await rejects(authenticate(p.ctx, 'nobody@example.test', 'wrong'), 'invalid_credentials', 401);
      const stored = await p.ctx.db
        .selectFrom('users')
        .select('password_hash')
        .where('id', '=', admin.userId)
        .executeTakeFirstOrThrow();
      assert.match(stored.password_hash, /^scrypt\$131072\$8\$1\$/);
      await rejects(
        createUser(p.ctx, { email: 'ALICE@example.test', password: 'x'.repeat(12) }),
        'email_taken',
        409,
      );
    });

    it('issues API tokens shown once and stored hashed, and revokes them', async () => {
      const token = await createToken(p.ctx, alice, 'laptop');
      assert.match(token.token, /^knl_[A-Za-z0-9_-]{43}$/);
      const rows = await p.ctx.db.selectFrom('api_tokens').selectAll().execute();
      assert.ok(rows.every((r) => r.token_hash !== token.token && !JSON.stringify(r).includes(token.token)));
      assert.deepEqual(await actorForToken(p.ctx, token.token), alice);
      assert.equal(await actorForToken(p.ctx, `${token.token}x`), undefined);
      await rejects(revokeToken(p.ctx, bob, token.id), 'token_not_found', 404);
      await revokeToken(p.ctx, alice, token.id);
      assert.equal(await actorForToken(p.ctx, token.token), undefined);
    });

    it('keeps sessions until they expire', async () => {
      const session = await createSession(p.ctx, bob);
      assert.deepEqual((await sessionFor(p.ctx, session.cookie))?.actor, bob);
      p.clock.advance(8 * 24 * 3_600_000);
      assert.equal(await sessionFor(p.ctx, session.cookie), undefined);
    });

    it('scopes teams and projects to their members; only admins set plans', async () => {
      const team = await createTeam(p.ctx, alice, 'Alice Co');
      assert.equal(team.plan, 'free');
      await rejects(teamFor(p.ctx, bob, team.id), 'team_not_found', 404);
      await rejects(setPlan(p.ctx, alice, team.id, 'pro'), 'forbidden', 403);
      assert.equal((await setPlan(p.ctx, admin, team.id, 'pro')).plan, 'pro');
      await rejects(setPlan(p.ctx, admin, team.id, 'gold'), 'validation_failed', 400);

      const project = await createProject(p.ctx, alice, {
        teamId: team.id,
        slug: 'petstore',
        name: 'Petstore',
        originUrl: 'http://127.0.0.1:4010/',
      });
      assert.equal(project.defaultHost, 'petstore.platform.test');
      assert.equal(project.originUrl, 'http://127.0.0.1:4010');
      await rejects(
        createProject(p.ctx, alice, { teamId: team.id, slug: 'petstore', name: 'x', originUrl: 'http://a' }),
        'slug_taken',
        409,
      );
      await rejects(
        createProject(p.ctx, alice, { teamId: team.id, slug: 'Bad_Slug', name: 'x', originUrl: 'http://a' }),
        'validation_failed',
        400,
      );
      await rejects(
        createProject(p.ctx, bob, { teamId: team.id, slug: 'sneaky', name: 'x', originUrl: 'http://a' }),
        'team_not_found',
        404,
      );
      await rejects(projectFor(p.ctx, bob, 'petstore'), 'project_not_found', 404);
      assert.deepEqual(await listProjects(p.ctx, bob), []);
      await addMember(p.ctx, alice, team.id, 'bob@example.test', 'member');
      assert.equal((await projectFor(p.ctx, bob, 'petstore')).id, project.id);
      await rejects(addMember(p.ctx, bob, team.id, 'admin@example.test', 'member'), 'forbidden', 403);
    });

    it('keeps an immutable deploy history with one active deploy; invalid documents fail with the validator messages', async () => {
      const first = await deployProject(p.ctx, alice, 'petstore', { document: VALID });
      assert.equal(first.status, 'succeeded');
      assert.equal(first.active, true);
      const broken = await deployProject(p.ctx, alice, 'petstore', {
        document: JSON.stringify({ openapi: '3.0.3', info: { title: 'x' }, paths: {} }),
      });
      assert.equal(broken.status, 'failed');
      assert.deepEqual(broken.problems, [
        '/info (line 1, column 20): The field "version" is required here: add it.',
      ]);
      const wrongVersion = await deployProject(p.ctx, alice, 'petstore', { document: '{"swagger":"2.0"}' });
      assert.deepEqual(wrongVersion.problems, [
        'openapi is null; Kennel publishes OpenAPI 3.0.x and 3.1.x documents (e.g. "3.0.3" or "3.1.1").',
      ]);
      const notYaml = await deployProject(p.ctx, alice, 'petstore', { document: 'openapi: [unclosed' });
      assert.equal(notYaml.status, 'failed');
      assert.match(notYaml.problems[0] ?? '', /^The document is not valid YAML/);
      const yaml = await deployProject(p.ctx, alice, 'petstore', {
        document: VALID_YAML,
        originUrl: 'http://127.0.0.1:4011',
      });
      assert.equal(yaml.sourceFormat, 'yaml');
      const history = await listDeploys(p.ctx, alice, 'petstore');
      assert.deepEqual(
        history.map((d) => [d.id, d.status, d.active]),
        [
          [yaml.id, 'succeeded', true],
          [notYaml.id, 'failed', false],
          [wrongVersion.id, 'failed', false],
          [broken.id, 'failed', false],
          [first.id, 'succeeded', false],
        ],
      );
      assert.equal((await projectFor(p.ctx, alice, 'petstore')).originUrl, 'http://127.0.0.1:4011');
    });
  });
}
