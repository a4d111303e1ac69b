import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { buildPlatformApp } from '../../src/main/platform-app.ts';
import { createTeam } from '../../src/platform/accounts/teams.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import {
  type Answer,
  appSuite,
  apiClient as client,
  codeOf,
  signedIn,
  statusAndBody,
  userIdOf,
} from '../support/api-scenario.ts';
import { testDialects } from '../support/databases.ts';
import { startPlatformContext, type TestPlatform } from '../support/platform.ts';
import { beforeMigration } from '../support/platform-migrations.ts';
import { SmtpReceiver } from '../support/smtp.ts';

/**
 * Issue 25, accounts: a reset link re-checked when used, a reset ending every session and API
 * token, members added only through invitations, and proved emails. All through the management
 * API, on both databases.
 */
const signInStatus = (app: FastifyInstance, email: string, password: string) =>
  app
    .inject({ method: 'POST', url: '/api/v1/session', payload: { email, password } })
    .then((r) => r.statusCode);

/** An answer with the values that differ per invitation (id, email, token, link) blanked. */
function shapeOf(answer: Answer): unknown {
  const { id, email, token, url, ...rest } = answer.body as Record<string, unknown>;
  return {
    httpStatus: answer.status,
    keys: Object.keys(answer.body).sort(),
    id: typeof id,
    email: typeof email,
    token: typeof token === 'string' ? token.replace(/^kin_[\w-]{43}$/, 'kin_…') : token,
    url: typeof url === 'string' ? url.replace(/#token=kin_[\w-]{43}$/, '#token=kin_…') : url,
    ...rest,
  };
}

const userId = userIdOf;

const provedAt = async (p: TestPlatform, email: string) =>
  (
    await p.ctx.db
      .selectFrom('users')
      .select('email_proved_at')
      .where('email', '=', email)
      .executeTakeFirstOrThrow()
  ).email_proved_at;

for (const dialect of testDialects()) {
  describe(`password resets: re-checked when used, ending sessions and tokens (${dialect})`, () => {
    const suite = appSuite(dialect);
    const anonymous = () => client(suite.app);

    it('refuses an old reset link once the account joined a team its maker does not own (Alice cannot take Victim in team B)', async () => {
      const alice = await createUser(suite.p.ctx, { email: 'alice@x.test', password: 'alice password 1' });
      const bob = await createUser(suite.p.ctx, { email: 'bob@x.test', password: 'bob password 123' });
      const teamA = (await createTeam(suite.p.ctx, alice, 'A')).id;
      const teamB = (await createTeam(suite.p.ctx, bob, 'B')).id;
      const asAlice = await signedIn(suite.app, 'alice@x.test', 'alice password 1');
      const asBob = await signedIn(suite.app, 'bob@x.test', 'bob password 123');
      // Victim (an account of the operator's, email proved) is in team A only, so Alice may make
      // a reset link for Victim.
      const victimActor = await createUser(suite.p.ctx, {
        email: 'victim@x.test',
        password: 'victim password 1',
      });
      await suite.p.ctx.db
        .insertInto('memberships')
        .values({
          team_id: teamA,
          user_id: victimActor.userId,
          role: 'member',
          created_at: suite.p.clock.now().toISOString(),
        })
        .execute();
      const victim = await userId(suite.p, 'victim@x.test');
      const link = await asAlice('POST', `/api/v1/teams/${teamA}/members/${victim}/password-reset`);
      assert.equal(link.status, 201);
      // Victim then joins team B (Bob's invitation, accepted with Victim's password).
      const toB = await asBob('POST', `/api/v1/teams/${teamB}/invitations`, { email: 'victim@x.test' });
      const joined = await anonymous()('POST', '/api/v1/invitations/accept', {
        token: toB.body.token,
        password: 'victim password 1',
      });
      assert.equal(joined.status, 201);
      // A new link is refused...
      assert.deepEqual(
        codeOf(await asAlice('POST', `/api/v1/teams/${teamA}/members/${victim}/password-reset`)),
        [403, 'forbidden'],
      );
      // ...and so is the old one, which says what to do.
      const redeemed = await anonymous()('POST', '/api/v1/password-reset', {
        token: link.body.token,
        password: 'alice owns you now',
      });
      assert.deepEqual(statusAndBody(redeemed), {
        status: 403,
        body: {
          code: 'reset_link_outdated',
          status: 403,
          message:
            'This password reset link no longer holds: the account belongs to a team the maker does not own. Your password is unchanged. Ask a platform admin (or an owner of every team of the account) for a new link.',
        },
      });
      assert.equal(await signInStatus(suite.app, 'victim@x.test', 'alice owns you now'), 401);
      assert.equal(await signInStatus(suite.app, 'victim@x.test', 'victim password 1'), 201);

      // Once Victim leaves team B, the link holds again (it was refused, not spent).
      const asVictim = await signedIn(suite.app, 'victim@x.test', 'victim password 1');
      assert.equal((await asVictim('DELETE', `/api/v1/teams/${teamB}/membership`)).status, 204);
      const again = await anonymous()('POST', '/api/v1/password-reset', {
        token: link.body.token,
        password: 'victim password 2',
      });
      assert.equal(again.status, 200);
      assert.equal(again.body.email, 'victim@x.test');
    });

    it('refuses an old reset link once its maker is no longer an owner of the team', async () => {
      const owner = await createUser(suite.p.ctx, { email: 'o2@x.test', password: 'owner2 password' });
      const member = await createUser(suite.p.ctx, { email: 'm2@x.test', password: 'member2 password' });
      const other = await createUser(suite.p.ctx, { email: 'p2@x.test', password: 'other2 password' });
      const team = (await createTeam(suite.p.ctx, owner, 'Two')).id;
      const now = suite.p.clock.now().toISOString();
      await suite.p.ctx.db
        .insertInto('memberships')
        .values([
          { team_id: team, user_id: member.userId, role: 'member', created_at: now },
          { team_id: team, user_id: other.userId, role: 'owner', created_at: now },
        ])
        .execute();
      const asOwner = await signedIn(suite.app, 'o2@x.test', 'owner2 password');
      const link = await asOwner('POST', `/api/v1/teams/${team}/members/${member.userId}/password-reset`);
      assert.equal(link.status, 201);
      const asOther = await signedIn(suite.app, 'p2@x.test', 'other2 password');
      assert.equal(
        (await asOther('PUT', `/api/v1/teams/${team}/members/${owner.userId}/role`, { role: 'member' }))
          .status,
        200,
      );
      const redeemed = await anonymous()('POST', '/api/v1/password-reset', {
        token: link.body.token,
        password: 'member2 new password',
      });
      assert.deepEqual(codeOf(redeemed), [403, 'reset_link_outdated']);
      assert.equal(await signInStatus(suite.app, 'm2@x.test', 'member2 password'), 201);
    });

    it('ends every session and revokes every API token of the account, and says so', async () => {
      const owner = await createUser(suite.p.ctx, { email: 'o3@x.test', password: 'owner3 password' });
      const team = (await createTeam(suite.p.ctx, owner, 'Three')).id;
      const asOwner = await signedIn(suite.app, 'o3@x.test', 'owner3 password');
      const invited = await asOwner('POST', `/api/v1/teams/${team}/invitations`, { email: 'm3@x.test' });
      await anonymous()('POST', '/api/v1/invitations/accept', {
        token: invited.body.token,
        name: 'M',
        password: 'member3 password',
      });
      // Whoever held the password (an attacker, say) made a token and has a session.
      const asHolder = await signedIn(suite.app, 'm3@x.test', 'member3 password');
      const token = await asHolder('POST', '/api/v1/tokens', { name: 'kept' });
      assert.equal(token.status, 201);
      const bearer = client(suite.app, { authorization: `Bearer ${token.body.token}` });
      assert.equal((await bearer('GET', '/api/v1/me')).status, 200);
      const member = await userId(suite.p, 'm3@x.test');
      const link = await asOwner('POST', `/api/v1/teams/${team}/members/${member}/password-reset`);
      const redeemed = await anonymous()('POST', '/api/v1/password-reset', {
        token: link.body.token,
        password: 'member3 new password',
      });
      assert.deepEqual(statusAndBody(redeemed), {
        status: 200,
        body: { email: 'm3@x.test', sessionsEnded: 1, tokensRevoked: 1 },
      });
      assert.deepEqual(codeOf(await bearer('GET', '/api/v1/me')), [401, 'unauthenticated']);
      assert.deepEqual(codeOf(await asHolder('GET', '/api/v1/me')), [401, 'unauthenticated']);
      assert.equal(await signInStatus(suite.app, 'm3@x.test', 'member3 new password'), 201);
    });
  });

  describe(`members only through invitations, and proved emails (${dialect})`, () => {
    const suite = appSuite(dialect);
    const anonymous = () => client(suite.app);

    it('a squatter who made an account under victim@x.test gets nothing when another team adds that email', async () => {
      const mallory = await createUser(suite.p.ctx, {
        email: 'mallory@x.test',
        password: 'mallory password',
      });
      const carol = await createUser(suite.p.ctx, { email: 'carol@x.test', password: 'carol password 1' });
      const teamS = (await createTeam(suite.p.ctx, mallory, 'Squat')).id;
      const teamC = (await createTeam(suite.p.ctx, carol, 'Carol')).id;
      // Mallory invites the victim's address to her own team and accepts with her own password.
      const asMallory = await signedIn(suite.app, 'mallory@x.test', 'mallory password');
      const squat = await asMallory('POST', `/api/v1/teams/${teamS}/invitations`, { email: 'victim@x.test' });
      assert.equal(squat.body.mailed, false);
      const accepted = await anonymous()('POST', '/api/v1/invitations/accept', {
        token: squat.body.token,
        name: 'Victim',
        password: 'mallory squats here',
      });
      assert.equal(accepted.status, 201);

      // Carol adds victim@x.test to her team: an invitation, nobody joins without accepting.
      const asCarol = await signedIn(suite.app, 'carol@x.test', 'carol password 1');
      const added = await asCarol('POST', `/api/v1/teams/${teamC}/members`, { email: 'victim@x.test' });
      assert.equal(added.status, 201);
      const asSquatter = await signedIn(suite.app, 'victim@x.test', 'mallory squats here');
      assert.deepEqual(codeOf(await asSquatter('GET', `/api/v1/teams/${teamC}`)), [404, 'team_not_found']);
      assert.equal(added.body.status, 'pending');
      assert.deepEqual((await asCarol('GET', `/api/v1/teams/${teamC}/members`)).body, [
        {
          userId: carol.userId,
          email: 'carol@x.test',
          name: null,
          role: 'owner',
          since: suite.p.clock.now().toISOString(),
        },
      ]);
      // Even if Carol's copied link reaches Mallory, it cannot hand Carol's team to an account
      // that never proved the email.
      const leaked = await anonymous()('POST', '/api/v1/invitations/accept', {
        token: added.body.token,
        password: 'mallory squats here',
      });
      assert.deepEqual(statusAndBody(leaked), {
        status: 403,
        body: {
          code: 'email_not_proved',
          status: 403,
          message:
            'The account of victim@x.test has never proved it owns this email, and this invitation was not mailed, so it cannot add the account to a team. Ask the team owner to invite you again once this Kennel mails invitations (its operator sets SMTP_URL), or ask a platform admin.',
        },
      });
      assert.deepEqual(codeOf(await asSquatter('GET', `/api/v1/teams/${teamC}`)), [404, 'team_not_found']);
      // The link is not spent by the refusal.
      const listed = await asCarol('GET', `/api/v1/teams/${teamC}/invitations`);
      assert.deepEqual(
        (listed.body as unknown as { email: string; status: string }[]).map((i) => [i.email, i.status]),
        [['victim@x.test', 'pending']],
      );
      assert.equal(await provedAt(suite.p, 'victim@x.test'), null, 'a copied link proves nothing');
    });

    it('answers adding and inviting the same way whether or not the email has an account', async () => {
      const owner = await createUser(suite.p.ctx, { email: 'dora@x.test', password: 'dora password 12' });
      await createUser(suite.p.ctx, { email: 'known@x.test', password: 'known password 1' });
      const team = (await createTeam(suite.p.ctx, owner, 'Same')).id;
      const asOwner = await signedIn(suite.app, 'dora@x.test', 'dora password 12');
      for (const path of [`/api/v1/teams/${team}/members`, `/api/v1/teams/${team}/invitations`]) {
        const known = await asOwner('POST', path, { email: 'known@x.test' });
        const unknown = await asOwner('POST', path, { email: 'nobody-here@x.test' });
        assert.equal(known.status, 201, JSON.stringify(known.body));
        assert.deepEqual(shapeOf(known), shapeOf(unknown), path);
        assert.deepEqual(shapeOf(known), {
          httpStatus: 201,
          keys: [
            'createdAt',
            'email',
            'expiresAt',
            'id',
            'mailed',
            'role',
            'status',
            'teamId',
            'token',
            'url',
          ],
          id: 'number',
          email: 'string',
          token: 'kin_…',
          url: 'http://platform.test/invitations/accept#token=kin_…',
          teamId: team,
          role: 'member',
          status: 'pending',
          mailed: false,
          createdAt: suite.p.clock.now().toISOString(),
          expiresAt: new Date(suite.p.clock.now().getTime() + 7 * 86_400_000).toISOString(),
        });
      }
      const owners = await asOwner('POST', `/api/v1/teams/${team}/members`, {
        email: 'known@x.test',
        role: 'owner',
      });
      assert.equal(owners.body.role, 'owner');
      // The seeded account (the operator's word) accepts and joins with the invitation's role.
      const joined = await anonymous()('POST', '/api/v1/invitations/accept', {
        token: owners.body.token,
        password: 'known password 1',
      });
      assert.deepEqual(joined.body, { email: 'known@x.test', teamId: team, role: 'owner' });
    });
  });

  describe(`proved by mail, with SMTP_URL (${dialect})`, () => {
    it('keeps a mailed token out of the answer; accepting the mailed link proves the email, also of an unproved account', async () => {
      const smtp = new SmtpReceiver();
      const url = await smtp.start();
      const p = await startPlatformContext(dialect, { SMTP_URL: url });
      const app = buildPlatformApp(p.ctx);
      try {
        const owner = await createUser(p.ctx, { email: 'eve@x.test', password: 'eve password 123' });
        const team = (await createTeam(p.ctx, owner, 'Mail')).id;
        const asOwner = await signedIn(app, 'eve@x.test', 'eve password 123');
        const tokenOf = (to: string) => {
          const mail = smtp.mails.findLast((m) => m.to.includes(to));
          return /^ {2}(kin_[\w-]{43})\r?$/m.exec(mail?.data ?? '')?.[1];
        };

        // A new account from a mailed link: proved.
        const invited = await asOwner('POST', `/api/v1/teams/${team}/members`, { email: 'fay@x.test' });
        assert.equal(invited.body.mailed, true);
        assert.equal(invited.body.token, undefined);
        assert.equal(invited.body.url, undefined);
        const fayToken = tokenOf('fay@x.test');
        assert.ok(fayToken);
        const fay = await client(app)('POST', '/api/v1/invitations/accept', {
          token: fayToken,
          name: 'Fay',
          password: 'fay password 123',
        });
        assert.equal(fay.status, 201);
        assert.equal(await provedAt(p, 'fay@x.test'), p.clock.now().toISOString());

        // An account that never proved its email (open sign-up, a copied link) proves it by
        // accepting a mailed invitation with its password.
        await createUser(p.ctx, { email: 'gil@x.test', password: 'gil password 123', emailProved: false });
        await asOwner('POST', `/api/v1/teams/${team}/invitations`, { email: 'gil@x.test' });
        const gil = await client(app)('POST', '/api/v1/invitations/accept', {
          token: tokenOf('gil@x.test'),
          password: 'gil password 123',
        });
        assert.equal(gil.status, 201);
        assert.equal(await provedAt(p, 'gil@x.test'), p.clock.now().toISOString());
      } finally {
        await app.close();
        await p.close();
        await smtp.stop();
      }
    });
  });

  describe(`migration 0006_account_proof (${dialect})`, () => {
    it('counts existing admins as proved and everyone else as not; existing invitations join as members, unmailed', async () => {
      await beforeMigration(dialect, '0006', async (db, migrateRest) => {
        const at = '2026-11-22T12:00:00.000Z';
        const yes = dialect === 'postgres' ? sql`true` : sql`1`;
        const no = dialect === 'postgres' ? sql`false` : sql`0`;
        await sql`INSERT INTO users (email, password_hash, is_admin, created_at) VALUES ('root@x.test', 'h', ${yes}, ${at}), ('pat@x.test', 'h', ${no}, ${at})`.execute(
          db,
        );
        await sql`INSERT INTO teams (name, plan, created_at) VALUES ('T', 'free', ${at})`.execute(db);
        await sql`INSERT INTO invitations (team_id, email, token_hash, invited_by, created_at, expires_at) SELECT id, 'new@x.test', 'hash', 1, ${at}, ${at} FROM teams`.execute(
          db,
        );
        await migrateRest();
        assert.deepEqual(
          (await db.selectFrom('users').select(['email', 'email_proved_at']).orderBy('email').execute()).map(
            (row) => ({ ...row }),
          ),
          [
            { email: 'pat@x.test', email_proved_at: null },
            { email: 'root@x.test', email_proved_at: at },
          ],
        );
        assert.deepEqual(
          (await db.selectFrom('invitations').select(['email', 'role', 'mailed_at']).execute()).map(
            (row) => ({
              ...row,
            }),
          ),
          [{ email: 'new@x.test', role: 'member', mailed_at: null }],
        );
      });
    });
  });
}
