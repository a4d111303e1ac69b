import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createTeam } from '../../src/platform/accounts/teams.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import { type PlatformTables, platformMigrations } from '../../src/platform/db-schema.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import { isUniqueViolation, migrateToLatest, openDatabase } from '../../src/storage/index.ts';
import {
  type Client,
  apiClient as client,
  errorOf,
  signedIn,
  startAppPlatform,
} from '../support/api-scenario.ts';
import { closeAll } from '../support/cleanup.ts';
import { createTestStorage, testDialects } from '../support/databases.ts';
import type { TestPlatform } from '../support/platform.ts';

/**
 * Issue 28: teams are renamed and deleted (once they have no projects) through the management
 * API; an invitation link tells its holder the team, the inviter and the email before accepting;
 * inviting an email again replaces its open invitation; messages name the team, not its id.
 */

const REPLACED =
  'This invitation link was replaced by a newer invitation to the same team and email: open the link of the latest invitation you were sent.';
const NOT_VALID =
  'This invitation link does not work: it was used, revoked or has expired. Ask a team owner for a new one.';

for (const dialect of testDialects()) {
  describe(`teams: rename, delete, invitation pages and replaced invitations (${dialect})`, () => {
    let p: TestPlatform;
    let app: FastifyInstance;
    let anonymous: Client;
    let owner: Client;
    let member: Client;
    let admin: Client;
    let outsider: Client;
    let shop = 0;
    const ids = { owner: 0, member: 0 };

    before(async () => {
      ({ p, app } = await startAppPlatform(dialect));
      anonymous = client(app);
      await createUser(p.ctx, { email: 'admin@x.test', password: 'admin password 1', isAdmin: true });
      const o = await createUser(p.ctx, {
        email: 'owner@x.test',
        password: 'owner password 1',
        name: 'Olga Owner',
      });
      const m = await createUser(p.ctx, { email: 'member@x.test', password: 'member password 1' });
      await createUser(p.ctx, { email: 'outsider@x.test', password: 'outsider password 1' });
      ids.owner = o.userId;
      ids.member = m.userId;
      shop = (await createTeam(p.ctx, o, 'Shop')).id;
      await p.ctx.db
        .insertInto('memberships')
        .values({ team_id: shop, user_id: m.userId, role: 'member', created_at: p.clock.now().toISOString() })
        .execute();
      owner = await signedIn(app, 'owner@x.test', 'owner password 1');
      member = await signedIn(app, 'member@x.test', 'member password 1');
      admin = await signedIn(app, 'admin@x.test', 'admin password 1');
      outsider = await signedIn(app, 'outsider@x.test', 'outsider password 1');
    });
    after(() => closeAll(app, p));

    it('renames a team for its owners only, trimmed and never blank', async () => {
      const renamed = await owner('PATCH', `/api/v1/teams/${shop}`, { name: '  Shop floor ' });
      assert.equal(renamed.status, 200);
      assert.deepEqual(renamed.body, { id: shop, name: 'Shop floor', plan: 'free', role: 'owner' });
      assert.deepEqual((await member('GET', `/api/v1/teams/${shop}`)).body.name, 'Shop floor');

      assert.deepEqual(errorOf(await member('PATCH', `/api/v1/teams/${shop}`, { name: 'Mine' })), [
        403,
        'forbidden',
        'Only owners of team "Shop floor" can do this. Ask an owner.',
      ]);
      assert.deepEqual(errorOf(await owner('PATCH', `/api/v1/teams/${shop}`, { name: '   ' })), [
        400,
        'validation_failed',
        'A team name cannot be blank: give it a few letters.',
      ]);
      assert.equal(
        (await owner('PATCH', `/api/v1/teams/${shop}`, { name: '' })).body.code,
        'validation_failed',
      );
      assert.deepEqual(
        (await outsider('PATCH', `/api/v1/teams/${shop}`, { name: 'Taken' })).body.code,
        'team_not_found',
      );
      // A platform admin renames any team (back, for the tests below).
      const back = await admin('PATCH', `/api/v1/teams/${shop}`, { name: 'Shop' });
      assert.deepEqual(back.body, { id: shop, name: 'Shop', plan: 'free', role: null });
      const row = await p.ctx.db.selectFrom('teams').select('name').where('id', '=', shop).executeTakeFirst();
      assert.equal(row?.name, 'Shop');
    });

    it('deletes a team only once it has no projects, with its memberships, invitations and webhook', async () => {
      const scratch = (await owner('POST', '/api/v1/teams', { name: 'Scratch' })).body.id as number;
      const actor = { userId: ids.owner, email: 'owner@x.test', isAdmin: false };
      await createProject(p.ctx, actor, {
        teamId: scratch,
        slug: 'scratch-api',
        name: 'Scratch API',
        originUrl: 'https://origin.example.com',
      });
      await createProject(p.ctx, actor, {
        teamId: scratch,
        slug: 'another-api',
        name: 'Another API',
        originUrl: 'https://origin.example.com',
      });
      await owner('POST', `/api/v1/teams/${scratch}/invitations`, { email: 'later@x.test' });
      await p.ctx.db
        .insertInto('webhook_endpoints')
        .values({
          team_id: scratch,
          url: 'https://hooks.example.com/',
          secret_sealed: 'x',
          created_at: p.clock.now().toISOString(),
          updated_at: p.clock.now().toISOString(),
        })
        .execute();

      assert.deepEqual(errorOf(await owner('DELETE', `/api/v1/teams/${scratch}`)), [
        409,
        'team_has_projects',
        'The team "Scratch" still has 2 projects (another-api, scratch-api): delete them or move them to another team first, then delete the team.',
      ]);
      await p.ctx.db.deleteFrom('projects').where('slug', '=', 'another-api').execute();
      assert.deepEqual(errorOf(await owner('DELETE', `/api/v1/teams/${scratch}`)), [
        409,
        'team_has_projects',
        'The team "Scratch" still has a project (scratch-api): delete it or move it to another team first, then delete the team.',
      ]);
      await p.ctx.db.deleteFrom('projects').where('slug', '=', 'scratch-api').execute();

      assert.deepEqual(errorOf(await member('DELETE', `/api/v1/teams/${shop}`)), [
        403,
        'forbidden',
        'Only owners of team "Shop" can do this. Ask an owner.',
      ]);
      assert.equal((await outsider('DELETE', `/api/v1/teams/${scratch}`)).body.code, 'team_not_found');

      const deleted = await owner('DELETE', `/api/v1/teams/${scratch}`);
      assert.equal(deleted.status, 204);
      assert.equal((await owner('GET', `/api/v1/teams/${scratch}`)).body.code, 'team_not_found');
      const left = await Promise.all(
        (['memberships', 'invitations', 'webhook_endpoints'] as const).map(
          async (table) =>
            (await p.ctx.db.selectFrom(table).select('team_id').where('team_id', '=', scratch).execute())
              .length,
        ),
      );
      assert.deepEqual(left, [0, 0, 0]);
      assert.deepEqual(
        ((await owner('GET', '/api/v1/teams')).body as unknown as { name: string }[]).map((t) => t.name),
        ['Shop'],
      );
    });

    it('shows an invitation link’s team, inviter and email to its holder, and nothing for a bad token', async () => {
      const invited = await owner('POST', `/api/v1/teams/${shop}/invitations`, { email: 'Ana@X.test' });
      const token = String(invited.body.token);
      const details = await anonymous('POST', '/api/v1/invitations/inspect', { token });
      assert.equal(details.status, 200);
      assert.deepEqual(details.body, {
        teamId: shop,
        teamName: 'Shop',
        email: 'ana@x.test',
        role: 'member',
        expiresAt: invited.body.expiresAt,
        invitedBy: { name: 'Olga Owner', email: 'owner@x.test' },
      });
      assert.deepEqual(
        errorOf(await anonymous('POST', '/api/v1/invitations/inspect', { token: 'kin_nope' })),
        [404, 'invitation_not_valid', NOT_VALID],
      );
      // Reading it changes nothing: it is still pending, and still accepts.
      const list = (await owner('GET', `/api/v1/teams/${shop}/invitations`)).body as unknown as {
        email: string;
        status: string;
      }[];
      assert.deepEqual(
        list.filter((i) => i.email === 'ana@x.test').map((i) => i.status),
        ['pending'],
      );
      await owner('DELETE', `/api/v1/teams/${shop}/invitations/${invited.body.id}`);
      assert.deepEqual(errorOf(await anonymous('POST', '/api/v1/invitations/inspect', { token })), [
        404,
        'invitation_not_valid',
        NOT_VALID,
      ]);
    });

    it('replaces an email’s open invitation when it is invited again: the old link stops working', async () => {
      const first = await owner('POST', `/api/v1/teams/${shop}/invitations`, { email: 'bo@x.test' });
      const second = await owner('POST', `/api/v1/teams/${shop}/invitations`, { email: 'BO@x.test' });
      assert.equal(second.status, 201);
      const open = await p.ctx.db
        .selectFrom('invitations')
        .select('id')
        .where('team_id', '=', shop)
        .where('email', '=', 'bo@x.test')
        .where('accepted_at', 'is', null)
        .where('revoked_at', 'is', null)
        .execute();
      assert.deepEqual(
        open.map((r) => Number(r.id)),
        [second.body.id],
      );
      const statuses = (
        (await owner('GET', `/api/v1/teams/${shop}/invitations`)).body as unknown as {
          id: number;
          status: string;
        }[]
      )
        .filter((i) => i.id === first.body.id || i.id === second.body.id)
        .map((i) => [i.id, i.status]);
      assert.deepEqual(statuses, [
        [second.body.id, 'pending'],
        [first.body.id, 'revoked'],
      ]);

      const old = { token: first.body.token, name: 'Bo', password: 'bo password 123' };
      assert.deepEqual(
        errorOf(await anonymous('POST', '/api/v1/invitations/inspect', { token: old.token })),
        [404, 'invitation_not_valid', REPLACED],
      );
      assert.deepEqual(errorOf(await anonymous('POST', '/api/v1/invitations/accept', old)), [
        404,
        'invitation_not_valid',
        REPLACED,
      ]);
      const accepted = await anonymous('POST', '/api/v1/invitations/accept', {
        ...old,
        token: second.body.token,
      });
      assert.equal(accepted.status, 201);
      assert.deepEqual(accepted.body, { email: 'bo@x.test', teamId: shop, role: 'member' });
      // Once Bo joined, the old link still does not work.
      assert.equal((await anonymous('POST', '/api/v1/invitations/accept', old)).status, 404);

      // The database holds one open invitation per team and email, whoever writes it.
      const row = {
        team_id: shop,
        email: 'cy@x.test',
        invited_by: ids.owner,
        created_at: p.clock.now().toISOString(),
        expires_at: '2099-01-01T00:00:00.000Z',
        accepted_at: null,
        revoked_at: null,
        mailed_at: null,
      };
      await p.ctx.db
        .insertInto('invitations')
        .values({ ...row, token_hash: 'a' })
        .execute();
      await assert.rejects(
        p.ctx.db
          .insertInto('invitations')
          .values({ ...row, token_hash: 'b' })
          .execute(),
        (error) => isUniqueViolation(error),
      );
    });

    it('names the team, not its id, in its messages', async () => {
      assert.deepEqual(
        errorOf(await owner('PUT', `/api/v1/teams/${shop}/members/${ids.owner}/role`, { role: 'member' })),
        [
          409,
          'last_owner',
          'owner@x.test is the last owner of the team "Shop": make another member owner first.',
        ],
      );
      assert.deepEqual(errorOf(await owner('DELETE', `/api/v1/teams/${shop}/membership`)), [
        409,
        'last_owner',
        'owner@x.test is the last owner of the team "Shop": make another member owner first.',
      ]);
      assert.deepEqual(
        errorOf(await owner('POST', `/api/v1/teams/${shop}/invitations`, { email: 'member@x.test' })),
        [409, 'already_member', 'member@x.test is already a member of the team "Shop".'],
      );
      assert.deepEqual(errorOf(await owner('DELETE', `/api/v1/teams/${shop}/members/99999`)), [
        404,
        'member_not_found',
        'The team "Shop" has no member with user id 99999: check the id against the team\'s members.',
      ]);
      assert.deepEqual(errorOf(await owner('DELETE', `/api/v1/teams/${shop}/invitations/99999`)), [
        404,
        'invitation_not_found',
        'The team "Shop" has no pending invitation with id 99999: check the id against the team\'s invitations.',
      ]);
      assert.deepEqual(
        errorOf(await member('PUT', `/api/v1/teams/${shop}/members/${ids.member}/role`, { role: 'owner' })),
        [403, 'forbidden', 'Only owners of team "Shop" can do this. Ask an owner.'],
      );
    });
  });

  describe(`migration 0015 keeps one open invitation per team and email (${dialect})`, () => {
    it('revokes all but the newest open invitation of each team and email, then indexes them', async () => {
      const storage = await createTestStorage(dialect);
      const database = openDatabase<PlatformTables>(storage.location);
      try {
        const before = Object.fromEntries(
          Object.entries(platformMigrations).filter(([name]) => name < '0015'),
        );
        await migrateToLatest(database.db, database.dialect, 'platform', before);
        const db = database.db;
        const now = '2026-11-01T00:00:00.000Z';
        const team = await db
          .insertInto('teams')
          .values({ name: 'T', plan: 'free', created_at: now })
          .returning('id')
          .executeTakeFirstOrThrow();
        const invite = (
          email: string,
          hash: string,
          extra: { accepted_at?: string; revoked_at?: string } = {},
        ) =>
          db
            .insertInto('invitations')
            .values({
              team_id: team.id,
              email,
              token_hash: hash,
              invited_by: 1,
              created_at: now,
              expires_at: '2099-01-01T00:00:00.000Z',
              accepted_at: null,
              revoked_at: null,
              mailed_at: null,
              ...extra,
            })
            .returning('id')
            .executeTakeFirstOrThrow();
        const a1 = await invite('a@x.test', 'h1');
        const a2 = await invite('a@x.test', 'h2');
        const a3 = await invite('a@x.test', 'h3');
        const accepted = await invite('a@x.test', 'h4', { accepted_at: now });
        const b1 = await invite('b@x.test', 'h5');
        await migrateToLatest(database.db, database.dialect, 'platform', platformMigrations);
        const rows = await db
          .selectFrom('invitations')
          .select(['id', 'accepted_at', 'revoked_at'])
          .orderBy('id')
          .execute();
        assert.deepEqual(
          rows.map((r) => [Number(r.id), r.accepted_at !== null, r.revoked_at !== null]),
          [
            [a1.id, false, true],
            [a2.id, false, true],
            [a3.id, false, false],
            [accepted.id, true, false],
            [b1.id, false, false],
          ],
        );
        await assert.rejects(invite('b@x.test', 'h6'), (error) => isUniqueViolation(error));
      } finally {
        await database.close();
        await storage.drop();
      }
    });
  });
}
