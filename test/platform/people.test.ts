import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildPlatformApp } from '../../src/main/platform-app.ts';
import { createTeam } from '../../src/platform/accounts/teams.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import {
  type Client,
  apiClient as client,
  codeOf,
  runScenarios,
  scenarios,
  signInSession,
  startAppPlatform,
  userIdOf,
} from '../support/api-scenario.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import { startPlatformContext, type TestPlatform } from '../support/platform.ts';
import { SmtpReceiver, unquote } from '../support/smtp.ts';

const DAY = 86_400_000;

/** Signs in with a session cookie: the client, and the cookie (to check it is signed out later). */
const signedIn = signInSession;

for (const dialect of testDialects()) {
  describe(`people: members, invitations, passwords (${dialect})`, () => {
    let p: TestPlatform;
    let app: FastifyInstance;
    let anonymous: Client;
    let owner: Client;
    let other: Client;
    let teamA = 0;
    let teamB = 0;
    const ids = { owner: 0, other: 0, admin: 0 };

    before(async () => {
      ({ p, app } = await startAppPlatform(dialect));
      anonymous = client(app);
      const admin = await createUser(p.ctx, {
        email: 'admin@x.test',
        password: 'admin password 1',
        isAdmin: true,
      });
      const a = await createUser(p.ctx, { email: 'owner@x.test', password: 'owner password 1' });
      const b = await createUser(p.ctx, { email: 'other@x.test', password: 'other password 1' });
      ids.admin = admin.userId;
      ids.owner = a.userId;
      ids.other = b.userId;
      teamA = (await createTeam(p.ctx, a, 'A')).id;
      teamB = (await createTeam(p.ctx, b, 'B')).id;
      owner = (await signedIn(app, 'owner@x.test', 'owner password 1')).as;
      other = (await signedIn(app, 'other@x.test', 'other password 1')).as;
    });
    after(() => closeAll(app, p));

    it('invites by email with a one-time token stored only as a hash; accepting creates the account and joins as member', async () => {
      const invited = await owner('POST', `/api/v1/teams/${teamA}/invitations`, { email: ' New@X.test ' });
      assert.equal(invited.status, 201);
      const token = String(invited.body.token);
      assert.match(token, /^kin_[\w-]{43}$/);
      assert.equal(invited.body.email, 'new@x.test');
      assert.equal(invited.body.status, 'pending');
      assert.equal(invited.body.expiresAt, new Date(p.clock.now().getTime() + 7 * DAY).toISOString());
      const stored = await p.ctx.db.selectFrom('invitations').selectAll().execute();
      assert.ok(!JSON.stringify(stored).includes(token), 'the token is not stored');

      // Team B's owner can neither see nor act on team A's invitations and members.
      await runScenarios(
        { other },
        scenarios('other', [
          ["another team's invitations", `GET /api/v1/teams/${teamA}/invitations`, '404 team_not_found'],
          ["another team's members", `GET /api/v1/teams/${teamA}/members`, '404 team_not_found'],
          [
            'revoking in another team',
            `DELETE /api/v1/teams/${teamA}/invitations/${invited.body.id}`,
            '404 team_not_found',
          ],
          [
            "revoking another team's invitation in one's own",
            `DELETE /api/v1/teams/${teamB}/invitations/${invited.body.id}`,
            '404 invitation_not_found',
          ],
        ]),
      );

      const short = await anonymous('POST', '/api/v1/invitations/accept', {
        token,
        name: 'N',
        password: 'short',
      });
      assert.deepEqual(codeOf(short), [400, 'validation_failed']);
      const accepted = await anonymous('POST', '/api/v1/invitations/accept', {
        token,
        name: 'New Person',
        password: 'new person password',
      });
      assert.equal(accepted.status, 201);
      assert.deepEqual(accepted.body, { email: 'new@x.test', teamId: teamA, role: 'member' });
      const again = await anonymous('POST', '/api/v1/invitations/accept', {
        token,
        name: 'New Person',
        password: 'new person password',
      });
      assert.deepEqual(codeOf(again), [404, 'invitation_not_valid']);

      const member = await signedIn(app, 'new@x.test', 'new person password');
      const members = await member.as('GET', `/api/v1/teams/${teamA}/members`);
      assert.deepEqual(
        members.body.map((m) => [m.email, m.name, m.role]),
        [
          ['owner@x.test', null, 'owner'],
          ['new@x.test', 'New Person', 'member'],
        ],
      );
      // A member cannot invite, change roles or list invitations.
      await runScenarios(
        { member: member.as },
        scenarios('member', [
          [
            'a member invites',
            `POST /api/v1/teams/${teamA}/invitations`,
            '403 forbidden',
            { body: { email: 'z@x.test' } },
          ],
          [
            'a member changes a role',
            `PUT /api/v1/teams/${teamA}/members/${ids.owner}/role`,
            '403 forbidden',
            { body: { role: 'member' } },
          ],
        ]),
      );
      const listed = await owner('GET', `/api/v1/teams/${teamA}/invitations`);
      assert.deepEqual(
        listed.body.map((i) => [i.email, i.status, 'token' in i]),
        [['new@x.test', 'accepted', false]],
      );
    });

    it('expires invitations after 7 days (clock), and revoked ones stop working', async () => {
      const expiring = await owner('POST', `/api/v1/teams/${teamA}/invitations`, { email: 'late@x.test' });
      const revoked = await owner('POST', `/api/v1/teams/${teamA}/invitations`, { email: 'gone@x.test' });
      assert.equal(
        (await owner('DELETE', `/api/v1/teams/${teamA}/invitations/${revoked.body.id}`)).status,
        204,
      );
      assert.deepEqual(
        codeOf(await owner('DELETE', `/api/v1/teams/${teamA}/invitations/${revoked.body.id}`)),
        [404, 'invitation_not_found'],
      );
      const accept = (token: unknown) =>
        anonymous('POST', '/api/v1/invitations/accept', { token, name: 'L', password: 'a good password 1' });
      assert.deepEqual(codeOf(await accept(revoked.body.token)), [404, 'invitation_not_valid']);
      p.clock.advance(7 * DAY);
      assert.deepEqual(codeOf(await accept(expiring.body.token)), [404, 'invitation_not_valid']);
      // Sessions last 7 days too: sign in again.
      owner = (await signedIn(app, 'owner@x.test', 'owner password 1')).as;
      other = (await signedIn(app, 'other@x.test', 'other password 1')).as;
      const statuses = (await owner('GET', `/api/v1/teams/${teamA}/invitations`)).body.map((i) => [
        i.email,
        i.status,
      ]);
      assert.deepEqual(statuses.slice(0, 2), [
        ['gone@x.test', 'revoked'],
        ['late@x.test', 'expired'],
      ]);
      assert.equal(
        await p.ctx.db.selectFrom('users').select('id').where('email', '=', 'late@x.test').executeTakeFirst(),
        undefined,
      );
    });

    it('changes roles and removes members; the last owner can be neither demoted nor removed, nor leave', async () => {
      const newId = await userIdOf(p, 'new@x.test');
      await runScenarios(
        { owner },
        scenarios('owner', [
          [
            'the last owner steps down',
            `PUT /api/v1/teams/${teamA}/members/${ids.owner}/role`,
            '409 last_owner',
            { body: { role: 'member' } },
          ],
          ['the last owner leaves', `DELETE /api/v1/teams/${teamA}/membership`, '409 last_owner'],
          [
            'the last owner is removed',
            `DELETE /api/v1/teams/${teamA}/members/${ids.owner}`,
            '409 last_owner',
          ],
          // Someone of another team is no member here.
          [
            'a role for a non-member',
            `PUT /api/v1/teams/${teamA}/members/${ids.other}/role`,
            '404 member_not_found',
            { body: { role: 'owner' } },
          ],
        ]),
      );
      const promoted = await owner('PUT', `/api/v1/teams/${teamA}/members/${newId}/role`, { role: 'owner' });
      assert.equal(promoted.status, 200);
      assert.equal(promoted.body.role, 'owner');
      // Two owners now: the first may step down.
      assert.equal(
        (await owner('PUT', `/api/v1/teams/${teamA}/members/${ids.owner}/role`, { role: 'member' })).status,
        200,
      );
      const newOwner = (await signedIn(app, 'new@x.test', 'new person password')).as;
      assert.equal((await newOwner('DELETE', `/api/v1/teams/${teamA}/members/${ids.owner}`)).status, 204);
      assert.deepEqual(codeOf(await owner('GET', `/api/v1/teams/${teamA}/members`)), [404, 'team_not_found']);
      // Invited back, the old owner (who has an account) accepts with their own password, then leaves.
      const invited = await newOwner('POST', `/api/v1/teams/${teamA}/invitations`, { email: 'owner@x.test' });
      const wrong = await anonymous('POST', '/api/v1/invitations/accept', {
        token: invited.body.token,
        password: 'not the password',
      });
      assert.deepEqual(codeOf(wrong), [401, 'invalid_credentials']);
      const back = await anonymous('POST', '/api/v1/invitations/accept', {
        token: invited.body.token,
        password: 'owner password 1',
      });
      assert.equal(back.status, 201);
      assert.equal((await owner('DELETE', `/api/v1/teams/${teamA}/membership`)).status, 204);
      assert.deepEqual(
        (await newOwner('GET', `/api/v1/teams/${teamA}/members`)).body.map((m) => m.email),
        ['new@x.test'],
      );
    });

    it('keeps one owner when two owners demote each other at the same moment', async () => {
      const x = await createUser(p.ctx, { email: 'x@x.test', password: 'x password 123' });
      const y = await createUser(p.ctx, { email: 'y@x.test', password: 'y password 123' });
      const team = await createTeam(p.ctx, x, 'Race');
      await p.ctx.db
        .insertInto('memberships')
        .values({
          team_id: team.id,
          user_id: y.userId,
          role: 'owner',
          created_at: p.clock.now().toISOString(),
        })
        .execute();
      const [asX, asY] = await Promise.all([
        signedIn(app, 'x@x.test', 'x password 123'),
        signedIn(app, 'y@x.test', 'y password 123'),
      ]);
      const answers = await Promise.all([
        asX.as('PUT', `/api/v1/teams/${team.id}/members/${y.userId}/role`, { role: 'member' }),
        asY.as('PUT', `/api/v1/teams/${team.id}/members/${x.userId}/role`, { role: 'member' }),
      ]);
      // The later one is refused: as the last owner (409) or, if the first had already committed
      // when its owner check ran, as a member now (403).
      const codes = answers.map(codeOf).sort((a, b) => Number(a[0]) - Number(b[0]));
      assert.equal(codes[0]?.[0], 200, JSON.stringify(codes));
      assert.ok(['403,forbidden', '409,last_owner'].includes(String(codes[1])), JSON.stringify(codes));
      const owners = await p.ctx.db
        .selectFrom('memberships')
        .select('user_id')
        .where('team_id', '=', team.id)
        .where('role', '=', 'owner')
        .execute();
      assert.equal(owners.length, 1);
    });

    it('changes your password with the current one and signs out your other sessions', async () => {
      const first = await signedIn(app, 'other@x.test', 'other password 1');
      const second = await signedIn(app, 'other@x.test', 'other password 1');
      const wrong = await first.as('PUT', '/api/v1/me/password', {
        currentPassword: 'nope nope nope',
        newPassword: 'a new password 2',
      });
      assert.deepEqual(codeOf(wrong), [403, 'wrong_current_password']);
      const changed = await first.as('PUT', '/api/v1/me/password', {
        currentPassword: 'other password 1',
        newPassword: 'a new password 2',
      });
      assert.equal(changed.status, 204);
      assert.equal((await first.as('GET', '/api/v1/me')).status, 200, 'the session that changed it stays');
      assert.deepEqual(codeOf(await second.as('GET', '/api/v1/me')), [401, 'unauthenticated']);
      assert.deepEqual(codeOf(await other('GET', '/api/v1/me')), [401, 'unauthenticated']);
      await signedIn(app, 'other@x.test', 'a new password 2');
    });

    it('lets an owner create a one-time reset link for a member of their team only', async () => {
      // Team B (other@x.test) invites someone; the owner of team A cannot reset them.
      const b = (await signedIn(app, 'other@x.test', 'a new password 2')).as;
      const invited = await b('POST', `/api/v1/teams/${teamB}/invitations`, { email: 'bee@x.test' });
      await anonymous('POST', '/api/v1/invitations/accept', {
        token: invited.body.token,
        name: 'Bee',
        password: 'bee password 12',
      });
      const bee = await userIdOf(p, 'bee@x.test');
      const newOwner = (await signedIn(app, 'new@x.test', 'new person password')).as;
      const resetOf = (team: number) => `/api/v1/teams/${team}/members/${bee}/password-reset`;
      await runScenarios(
        { newOwner },
        scenarios('newOwner', [
          ["another team's member", `POST ${resetOf(teamB)}`, '404 team_not_found'],
          ['no member of this team', `POST ${resetOf(teamA)}`, '404 member_not_found'],
        ]),
      );
      const beeSession = await signedIn(app, 'bee@x.test', 'bee password 12');
      const reset = await b('POST', `/api/v1/teams/${teamB}/members/${bee}/password-reset`);
      assert.equal(reset.status, 201);
      assert.match(String(reset.body.token), /^krs_[\w-]{43}$/);
      // The dashboard link: the platform address the owner used, the token only in the fragment.
      assert.equal(reset.body.url, `http://platform.test/reset-password#token=${reset.body.token}`);
      assert.equal(reset.body.expiresAt, new Date(p.clock.now().getTime() + DAY).toISOString());
      const redeem = (password: string) =>
        anonymous('POST', '/api/v1/password-reset', { token: reset.body.token, password });
      assert.deepEqual(await redeem('bee password 34').then((a) => [a.status, a.body]), [
        200,
        { email: 'bee@x.test', sessionsEnded: 1, tokensRevoked: 0 },
      ]);
      assert.deepEqual(codeOf(await redeem('bee password 56')), [404, 'reset_link_not_valid']);
      assert.deepEqual(codeOf(await beeSession.as('GET', '/api/v1/me')), [401, 'unauthenticated']);
      await signedIn(app, 'bee@x.test', 'bee password 34');
      // Expired after a day.
      const late = await b('POST', `/api/v1/teams/${teamB}/members/${bee}/password-reset`);
      p.clock.advance(DAY);
      assert.deepEqual(
        codeOf(
          await anonymous('POST', '/api/v1/password-reset', {
            token: late.body.token,
            password: 'x'.repeat(12),
          }),
        ),
        [404, 'reset_link_not_valid'],
      );
      // Bee joins team A as well: team B's owner no longer owns every team of Bee's, so only an admin may reset.
      const toA = await newOwner('POST', `/api/v1/teams/${teamA}/invitations`, { email: 'bee@x.test' });
      const acceptToA = () =>
        anonymous('POST', '/api/v1/invitations/accept', {
          token: toA.body.token,
          password: 'bee password 34',
        });
      // Bee's account came from a copied link, which proved nothing about the email: another
      // copied link cannot add it to a team (test/platform/account-proof.test.ts).
      assert.deepEqual(codeOf(await acceptToA()), [403, 'email_not_proved']);
      await p.ctx.db
        .updateTable('users')
        .set({ email_proved_at: p.clock.now().toISOString() })
        .where('id', '=', bee)
        .execute();
      assert.equal((await acceptToA()).status, 201);
      const admin = (await signedIn(app, 'admin@x.test', 'admin password 1')).as;
      await runScenarios({ b, admin }, [
        {
          name: 'an owner of one of their teams',
          as: 'b',
          method: 'POST',
          url: resetOf(teamB),
          status: 403,
          code: 'forbidden',
        },
        { name: 'an admin', as: 'admin', method: 'POST', url: resetOf(teamB), status: 201 },
      ]);
    });

    it('refuses sign-up unless the operator turns it on', async () => {
      const body = { email: 'self@x.test', name: 'Self', password: 'self password 12' };
      assert.deepEqual(codeOf(await anonymous('POST', '/api/v1/users', body)), [403, 'sign_up_closed']);
      assert.deepEqual((await anonymous('GET', '/api/v1/sign-up')).body, { open: false });
      const open = await startPlatformContext(dialect, { KENNEL_OPEN_SIGNUP: 'on' });
      const openApp = buildPlatformApp(open.ctx);
      try {
        assert.deepEqual((await client(openApp)('GET', '/api/v1/sign-up')).body, { open: true });
        const created = await client(openApp)('POST', '/api/v1/users', body);
        assert.equal(created.status, 201);
        assert.equal(created.body.email, 'self@x.test');
        const self = (await signedIn(openApp, 'self@x.test', 'self password 12')).as;
        const teams = await self('GET', '/api/v1/teams');
        assert.deepEqual(
          teams.body.map((t) => [t.id, t.role]),
          [[created.body.teamId, 'owner']],
        );
        assert.deepEqual(codeOf(await client(openApp)('POST', '/api/v1/users', body)), [409, 'email_taken']);
      } finally {
        await openApp.close();
        await open.close();
      }
    });
  });
}

for (const dialect of testDialects()) {
  describe(`invitations by mail, with SMTP_URL (${dialect})`, () => {
    it('mails the token to the invitee (only there); a mail that fails leaves the invitation (mailed: false)', async () => {
      const smtp = new SmtpReceiver();
      const url = await smtp.start();
      const p = await startPlatformContext(dialect, { SMTP_URL: url, SMTP_FROM: 'ops@platform.test' });
      const app = buildPlatformApp(p.ctx);
      try {
        const a = await createUser(p.ctx, { email: 'owner@x.test', password: 'owner password 1' });
        const team = await createTeam(p.ctx, a, 'Shop\r\nBcc: evil@x.test');
        const ownerSession = await signedIn(app, 'owner@x.test', 'owner password 1');
        const owner = ownerSession.as;
        const ownerAuth = ownerSession.auth;
        const invited = await owner('POST', `/api/v1/teams/${team.id}/invitations`, { email: 'ana@x.test' });
        assert.equal(invited.status, 201);
        assert.equal(invited.body.mailed, true);
        // Mailed: the token is in the mail only, so accepting it proves the address.
        assert.equal(invited.body.token, undefined);
        assert.equal(invited.body.url, undefined);
        assert.equal(smtp.mails.length, 1);
        const [mail] = smtp.mails;
        assert.deepEqual([mail?.from, mail?.to], ['ops@platform.test', ['ana@x.test']]);
        // The message as a mail reader sees it: headers unfolded (RFC 5322), body decoded from
        // quoted-printable (nodemailer folds long headers and encodes long lines).
        const raw = mail?.data ?? '';
        const split = raw.indexOf('\r\n\r\n');
        const headers = raw.slice(0, split).replace(/\r\n[ \t]/g, ' ');
        const body = unquote(raw.slice(split + 4));
        assert.match(
          headers,
          /^Subject: owner@x\.test invites you to the team Shop Bcc: evil@x\.test on Kennel\r?$/m,
        );
        assert.doesNotMatch(headers, /^Bcc:/m);
        const token = /^ {2}(kin_[\w-]{43})\r?$/m.exec(body)?.[1] as string;
        assert.ok(token, body);
        // The mail opens the dashboard's accept page at the platform's address (inject's Host,
        // localhost:80, is not PLATFORM_DOMAIN, so the link names PLATFORM_DOMAIN).
        assert.ok(body.includes(`  http://platform.test/invitations/accept#token=${token}\r\n`), body);
        assert.match(
          body,
          /kennel members accept kin_\S+ --name "Your Name" --server http:\/\/platform\.test\r?$/m,
        );

        // The port the client used is kept (a port mapping may change it); a Host naming another
        // site (only a direct call to the app can send one) never lands in a link.
        const inviteWithHost = async (host: string, email: string) => {
          const answer = await app.inject({
            method: 'POST',
            url: `/api/v1/teams/${team.id}/invitations`,
            headers: { ...ownerAuth, host, 'content-type': 'application/json' },
            payload: JSON.stringify({ email }),
          });
          assert.equal(answer.statusCode, 201);
          const mail = unquote(smtp.mails.at(-1)?.data ?? '');
          return new URL(/^ {2}(http\S+#token=kin_[\w-]{43})\r?$/m.exec(mail)?.[1] ?? 'invalid:');
        };
        assert.equal(
          (await inviteWithHost('platform.test:8080', 'cy@x.test')).origin,
          'http://platform.test:8080',
        );
        assert.equal((await inviteWithHost('evil.test', 'dee@x.test')).origin, 'http://platform.test');
        assert.equal((await inviteWithHost('evil.test:8080', 'eve@x.test')).origin, 'http://platform.test');

        const bad = await owner('POST', `/api/v1/teams/${team.id}/invitations`, {
          email: 'a@x.test>\r\nRCPT TO:<b@x.test',
        });
        assert.deepEqual(codeOf(bad), [400, 'validation_failed']);

        await smtp.stop();
        const unmailed = await owner('POST', `/api/v1/teams/${team.id}/invitations`, { email: 'bo@x.test' });
        assert.equal(unmailed.status, 201);
        assert.equal(unmailed.body.mailed, false);
        assert.match(String(unmailed.body.token), /^kin_/);
      } finally {
        await app.close();
        await p.close();
        await smtp.stop().catch(() => undefined);
      }
    });
  });
}
