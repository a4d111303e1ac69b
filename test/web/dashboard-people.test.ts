import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { buildPlatformApp } from '../../src/main/platform-app.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import { accessibilityViolations } from '../support/axe.ts';
import type { TestBrowser } from '../support/chromium.ts';
import { closeAll } from '../support/cleanup.ts';
import { checkBothWidths, expectText, signIn, textOf, WAIT } from '../support/dashboard-page.ts';
import { testDialects } from '../support/databases.ts';
import { seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';
import { SmtpReceiver } from '../support/smtp.ts';
import { type Dashboard, listenOnPort, startDashboard } from '../support/web-dashboard.ts';

const DAY = 86_400_000;

/**
 * Issue 15's people pages in Debian's Chromium, against the real management app on a real
 * database: the account page (password, API tokens), a team's people (members, roles, reset
 * links, invitations, leaving), and the pages reached from links without an account (accepting an
 * invitation, setting a password from a reset link, open sign-up). Each new page is checked with
 * axe at 1280 and 390 px, must not scroll sideways on the phone, and is saved as a screenshot.
 */
for (const dialect of testDialects()) {
  describe(`dashboard people and account pages in Chromium (${dialect})`, () => {
    let p: TestPlatform;
    let dashboard: Dashboard;
    let chromium: TestBrowser;
    let ownerContext: BrowserContext;
    let owner: Page;
    let port = 0;
    let base = '';
    let teamId = 0;
    let ownerPassword = 'owner password 1';
    /** Ana: invited in the browser, she accepts in a context of her own. */
    let ana: Page;

    /** Confirms the open dialog with its `button`. */
    async function confirm(target: Page, button: string) {
      const dialog = target.getByRole('dialog');
      await dialog.getByRole('button', { name: button }).click();
      await dialog.waitFor({ state: 'detached', ...WAIT });
    }

    const memberRow = (target: Page, email: string) => target.locator(`tr[data-member="${email}"]`);
    const invitationStatus = (email: string) =>
      owner.locator(`tr[data-invitation="${email}"] [data-testid="status"]`);

    /** Invites `email` from the owner's people page; answers the one-time link shown. */
    async function invite(email: string): Promise<string> {
      await owner.getByLabel('Email').fill(email);
      await owner.getByRole('button', { name: 'Invite', exact: true }).click();
      const shown = owner.locator('[data-testid="invitation-link"]', { hasText: email });
      await shown.waitFor(WAIT);
      return textOf(shown.locator('[data-field="secret"]'));
    }

    /** A fresh browser, not signed in, opening `url`. */
    const guest = (url: string) => dashboard.guest(url);

    before(async () => {
      p = await startPlatformContext(dialect);
      p.clock.set(Date.now());
      const seeded = await seedTeam(p.ctx);
      teamId = seeded.team.id;
      // Someone with an account already, to be invited later.
      await createUser(p.ctx, { email: 'dee@x.test', password: 'dee password 12', name: 'Dee' });
      dashboard = await startDashboard(p);
      ({ base, chromium } = dashboard);
      port = Number(new URL(base).port);
      ownerContext = await chromium.newContext();
      owner = await ownerContext.newPage();
    });

    after(() => closeAll(dashboard, p));

    it('offers no sign-up while it is closed; the account page changes the password, with the API’s error first', async () => {
      const policy = owner.waitForResponse((r) => r.url().endsWith('/api/v1/sign-up'));
      await owner.goto(`${base}/sign-in`);
      assert.equal(((await (await policy).json()) as { open: boolean }).open, false);
      await owner.getByLabel('Email').waitFor(WAIT);
      assert.equal(await owner.getByRole('link', { name: 'Create an account' }).count(), 0);

      await signIn(owner, base, 'owner@x.test', ownerPassword);
      await owner.locator('header.topbar').getByRole('link', { name: 'Account' }).click();
      await owner.getByRole('heading', { level: 1, name: 'Account' }).waitFor(WAIT);
      await owner.getByText('No API tokens').waitFor(WAIT);
      await checkBothWidths(owner, 'account');

      await owner.getByLabel('Current password').fill('not my password');
      await owner.getByLabel('New password').fill('owner password 2');
      await owner.getByRole('button', { name: 'Change password' }).click();
      const wrong = owner.getByRole('alert').filter({ hasText: 'The current password is not right' });
      await expectText(wrong, /your password is unchanged/);
      assert.match(await textOf(wrong), /wrong_current_password/);

      await owner.getByLabel('Current password').fill(ownerPassword);
      await owner.getByLabel('New password').fill('owner password 2');
      await owner.getByRole('button', { name: 'Change password' }).click();
      await owner.locator('#main').getByRole('status').filter({ hasText: 'Password changed' }).waitFor(WAIT);
      ownerPassword = 'owner password 2';
      // The session that made the change stays signed in; the new password signs in elsewhere.
      const other = await (await chromium.newContext()).newPage();
      await signIn(other, base, 'owner@x.test', ownerPassword);
      await other.context().close();
    });

    it('creates an API token whose secret is shown once, works as Bearer, and stops working once revoked', async () => {
      await owner.getByLabel('Token name').fill('ci script');
      await owner.getByRole('button', { name: 'Create token' }).click();
      const shown = owner.locator('[data-testid="new-token"]');
      await expectText(shown, /you will not see this again/);
      const secret = await textOf(shown.locator('[data-field="secret"]'));
      assert.match(secret, /^knl_[\w-]{20,}$/);
      await owner.locator('tr[data-token="ci script"]').waitFor(WAIT);
      await checkBothWidths(owner, 'account-token');

      const me = () =>
        fetch(`http://127.0.0.1:${port}/api/v1/me`, { headers: { authorization: `Bearer ${secret}` } });
      const answer = await me();
      assert.equal(answer.status, 200);
      assert.equal(((await answer.json()) as { email: string }).email, 'owner@x.test');

      // Shown once: a reload lists the token (now used) but never its secret.
      await owner.reload();
      const row = owner.locator('tr[data-token="ci script"]');
      await row.waitFor(WAIT);
      assert.equal(await owner.locator('[data-testid="new-token"]').count(), 0);
      assert.equal((await owner.content()).includes(secret), false, 'the secret is nowhere on the page');
      assert.doesNotMatch(await textOf(row.locator('td[data-label="Last used"]')), /Never/);
      assert.match(await textOf(row), new RegExp(`${secret.slice(0, 8)}`));

      await row.getByRole('button', { name: 'Revoke token ci script' }).click();
      await confirm(owner, 'Revoke token');
      await owner.getByText('No API tokens').waitFor(WAIT);
      const revoked = await me();
      assert.equal(revoked.status, 401);
      assert.equal(((await revoked.json()) as { code: string }).code, 'unauthenticated');
    });

    it('invites by email: the one-time link is shown, a second browser accepts it and lands signed in on the team', async () => {
      await owner.goto(`${base}/`);
      await owner.getByRole('link', { name: 'Shop: people and invitations' }).click();
      await owner.getByRole('heading', { level: 1, name: 'Shop' }).waitFor(WAIT);
      assert.equal(await textOf(memberRow(owner, 'owner@x.test').getByTestId('role')), 'Owner');
      await owner.getByText('No invitations yet').waitFor(WAIT);

      const link = await invite('ana@x.test');
      assert.match(link, new RegExp(`^${base}/invitations/accept#token=kin_[\\w-]{43}$`));
      assert.match(
        await textOf(owner.locator('[data-testid="invitation-link"]')),
        /It was not mailed .* send the link yourself, over a channel you trust.*A link you pass on proves nothing about the address: it cannot add an existing account that never proved its email\. For that, the operator sets SMTP_URL so invitations are mailed\./s,
      );
      await invitationStatus('ana@x.test')
        .filter({ hasText: /^Pending$/ })
        .waitFor(WAIT);
      await checkBothWidths(owner, 'team-people');

      ana = await guest(link);
      await ana.getByRole('heading', { level: 1, name: 'Join a team on Kennel' }).waitFor(WAIT);
      await checkBothWidths(ana, 'accept-invitation');
      await ana.getByLabel('Your name').fill('Ana');
      await ana.getByLabel('Choose a password').fill('ana password 12');
      await ana.getByRole('button', { name: 'Join the team' }).click();
      await ana.getByRole('heading', { level: 1, name: 'Shop' }).waitFor(WAIT);
      assert.equal(new URL(ana.url()).pathname, `/teams/${teamId}/people`);
      assert.match(await textOf(ana.locator('header.topbar')), /ana@x\.test/);

      // A member sees the list, and no owner action.
      assert.equal(await textOf(memberRow(ana, 'ana@x.test').getByTestId('role')), 'Member');
      assert.equal(await memberRow(ana, 'owner@x.test').count(), 1);
      for (const name of [/^Make /, /^Remove /, /^Reset link/]) {
        assert.equal(await ana.getByRole('button', { name }).count(), 0, String(name));
      }
      assert.equal(await ana.getByRole('heading', { name: 'Invitations' }).count(), 0);
      assert.equal(await ana.getByLabel('Email').count(), 0, 'no invitation form');
      assert.equal(await ana.getByRole('button', { name: 'Leave team' }).count(), 1);
      await checkBothWidths(ana, 'team-people-member');

      await owner.reload();
      await invitationStatus('ana@x.test')
        .filter({ hasText: /^Accepted$/ })
        .waitFor(WAIT);
      assert.equal(await textOf(memberRow(owner, 'ana@x.test').getByTestId('role')), 'Member');

      // The link worked once: opened again, it says so, with no form to fill in.
      const again = await guest(link);
      const used = again.getByRole('alert').filter({ hasText: 'This invitation link does not work' });
      await expectText(used, /it was used, revoked or has expired/);
      assert.match(await textOf(used), /invitation_not_valid/);
      assert.equal(await again.getByRole('button', { name: 'Join the team' }).count(), 0);
      await again.context().close();
    });

    it('asks for the existing account’s password when the invited email has one (the API’s answer decides)', async () => {
      const link = await invite('dee@x.test');
      const dee = await guest(link);
      await dee.getByLabel('Your name').fill('Dee');
      await dee.getByLabel('Choose a password').fill('a brand new password');
      await dee.getByRole('button', { name: 'Join the team' }).click();
      await dee
        .getByRole('alert')
        .filter({ hasText: 'This email already has a Kennel account: enter its password' })
        .waitFor(WAIT);
      assert.equal(await dee.getByLabel('I already have a Kennel account with this email').isChecked(), true);
      assert.equal(await dee.getByLabel('Your name').isVisible(), false);
      await dee.getByLabel('Your Kennel password').fill('dee password 12');
      await dee.getByRole('button', { name: 'Join the team' }).click();
      await dee.getByRole('heading', { level: 1, name: 'Shop' }).waitFor(WAIT);
      assert.match(await textOf(dee.locator('header.topbar')), /dee@x\.test/);
      await dee.context().close();
    });

    it('lets the owner change a role and make a reset link; the member sets a new password with it and signs in', async () => {
      await owner.reload();
      const row = memberRow(owner, 'ana@x.test');
      // The role's button, confirmed, and the role the row then shows.
      for (const [button, role] of [
        ['Make owner (Ana)', /^Owner$/],
        ['Make member (Ana)', /^Member$/],
      ] as const) {
        await row.getByRole('button', { name: button }).click();
        await confirm(owner, 'Change role');
        await row.getByTestId('role').filter({ hasText: role }).waitFor(WAIT);
      }

      await row.getByRole('button', { name: 'Reset link for Ana' }).click();
      const shown = owner.locator('[data-testid="reset-link"]');
      await shown.waitFor(WAIT);
      const link = await textOf(shown.locator('[data-field="secret"]'));
      assert.match(link, new RegExp(`^${base}/reset-password#token=krs_[\\w-]{43}$`));
      assert.match(await textOf(shown), /Password reset link for ana@x\.test/);

      const reset = await guest(link);
      await reset.getByRole('heading', { level: 1, name: 'Set a new password' }).waitFor(WAIT);
      await checkBothWidths(reset, 'reset-password');
      await reset.getByLabel('New password').fill('ana new password 1');
      await reset.getByRole('button', { name: 'Set password' }).click();
      await reset.getByRole('heading', { level: 1, name: 'Sign in to Kennel' }).waitFor(WAIT);
      const done = reset.locator('#main').getByRole('status').filter({ hasText: 'Your new password is set' });
      await done.waitFor(WAIT);
      // Ana's one session ended, and she has no API token: the flash counts both.
      assert.match(
        await textOf(done),
        /Your new password is set: 1 session\(s\) signed out and 0 API token\(s\) revoked \(make new ones where you used them\)\. Sign in with it\./,
      );
      assert.equal(await reset.getByLabel('Email').inputValue(), 'ana@x.test');
      await reset.getByLabel('Password').fill('ana new password 1');
      await reset.getByRole('button', { name: 'Sign in' }).click();
      await reset.getByRole('heading', { level: 1, name: 'Projects' }).waitFor(WAIT);
      assert.match(await textOf(reset.locator('header.topbar')), /ana@x\.test/);

      // The reset signed out Ana's earlier session; the old password no longer signs in.
      await ana.reload();
      await ana.getByRole('heading', { level: 1, name: 'Sign in to Kennel' }).waitFor(WAIT);
      await ana.getByLabel('Email').fill('ana@x.test');
      await ana.getByLabel('Password').fill('ana password 12');
      await ana.getByRole('button', { name: 'Sign in' }).click();
      await ana.getByRole('alert').filter({ hasText: 'Could not sign in' }).waitFor(WAIT);

      // The link worked once.
      const again = await guest(link);
      await again.getByLabel('New password').fill('yet another password');
      await again.getByRole('button', { name: 'Set password' }).click();
      const used = again.getByRole('alert').filter({ hasText: 'This reset link does not work' });
      await expectText(used, /reset_link_not_valid/);
      await again.context().close();
      await reset.context().close();
    });

    it('offers the last owner no Leave, saying why; a member leaves and loses the team', async () => {
      await owner.reload();
      const why = owner.getByTestId('leave-last-owner');
      await expectText(
        why,
        'You are the only owner of Shop, so you cannot leave it. Make another member owner first, or delete the team if nobody needs it any more.',
      );
      assert.equal(await owner.getByRole('button', { name: /^Leave team/ }).count(), 0);

      await signIn(ana, base, 'ana@x.test', 'ana new password 1');
      await ana.goto(`${base}/teams/${teamId}/people`);
      await ana.getByRole('button', { name: 'Leave team' }).click();
      await confirm(ana, 'Leave team');
      await ana.getByRole('heading', { level: 1, name: 'Projects' }).waitFor(WAIT);
      assert.doesNotMatch(await textOf(ana.locator('header.topbar')), /Shop/);
      await ana.goto(`${base}/teams/${teamId}/people`);
      await ana.getByRole('heading', { level: 1, name: 'Team not found' }).waitFor(WAIT);

      await owner.reload();
      await memberRow(owner, 'dee@x.test').waitFor(WAIT);
      assert.equal(await memberRow(owner, 'ana@x.test').count(), 0);

      // The owner removes Dee, after confirming.
      await memberRow(owner, 'dee@x.test').getByRole('button', { name: 'Remove Dee' }).click();
      await confirm(owner, 'Remove member');
      await memberRow(owner, 'dee@x.test').waitFor({ state: 'detached', ...WAIT });
      const left = await p.ctx.db
        .selectFrom('memberships')
        .innerJoin('users', 'users.id', 'memberships.user_id')
        .select('users.email')
        .where('memberships.team_id', '=', teamId)
        .execute();
      assert.deepEqual(
        left.map((m) => m.email),
        ['owner@x.test'],
      );
    });

    it('says in words why a garbage, expired or revoked invitation link does not work, and when a link has no token', async () => {
      const garbage = await guest(`${base}/invitations/accept#token=kin_garbage`);
      const refused = garbage.getByRole('alert').filter({ hasText: 'This invitation link does not work' });
      await expectText(refused, /Ask a team owner for a new one/);
      await garbage.goto(`${base}/invitations/accept`);
      await garbage.getByRole('alert').filter({ hasText: 'No token in this link' }).waitFor(WAIT);
      assert.equal(await garbage.getByRole('button', { name: 'Join the team' }).count(), 0);
      await garbage.context().close();

      const late = await invite('bo@x.test');
      p.clock.advance(8 * DAY);
      // Sessions last 7 days too: the owner signs in again, and finds the invitation expired.
      await signIn(owner, base, 'owner@x.test', ownerPassword);
      await owner.goto(`${base}/teams/${teamId}/people`);
      await invitationStatus('bo@x.test')
        .filter({ hasText: /^Expired$/ })
        .waitFor(WAIT);
      const expired = await guest(late);
      await expired
        .getByRole('alert')
        .filter({ hasText: /has expired.*invitation_not_valid/s })
        .waitFor(WAIT);
      await expired.context().close();

      const revokedLink = await invite('cy@x.test');
      await owner.getByRole('button', { name: 'Revoke the invitation for cy@x.test' }).click();
      await confirm(owner, 'Revoke invitation');
      await invitationStatus('cy@x.test')
        .filter({ hasText: /^Revoked$/ })
        .waitFor(WAIT);
      assert.equal(
        await owner.getByRole('button', { name: 'Revoke the invitation for cy@x.test' }).count(),
        0,
      );
      const revoked = await guest(revokedLink);
      await revoked.getByRole('alert').filter({ hasText: 'invitation_not_valid' }).waitFor(WAIT);
      await revoked.context().close();

      // An account that never proved its email (open sign-up, an earlier copied link) cannot join
      // through a link the owner copied: the page says why and what to do.
      await createUser(p.ctx, { email: 'una@x.test', password: 'una password 12', emailProved: false });
      const unproved = await guest(await invite('una@x.test'));
      await unproved.getByLabel('I already have a Kennel account with this email').check();
      await unproved.getByLabel('Your Kennel password').fill('una password 12');
      await unproved.getByRole('button', { name: 'Join the team' }).click();
      const notProved = unproved
        .getByRole('alert')
        .filter({ hasText: 'This invitation cannot add your account' });
      await expectText(
        notProved,
        /once this Kennel mails invitations \(its operator sets SMTP_URL\).*email_not_proved/s,
      );
      await unproved.context().close();
    });

    it('offers "Create an account" when the operator opened sign-up, and signs the new account in', async () => {
      // The same database under KENNEL_OPEN_SIGNUP=on.
      const openApp = buildPlatformApp({ ...p.ctx, config: { ...p.ctx.config, openSignUp: true } });
      try {
        const openBase = `http://platform.test:${await listenOnPort(openApp)}`;
        const visitor = await guest(`${openBase}/sign-in`);
        await visitor.getByRole('link', { name: 'Create an account' }).click();
        await visitor.getByRole('heading', { level: 1, name: 'Create an account' }).waitFor(WAIT);
        await checkBothWidths(visitor, 'sign-up');
        await visitor.getByLabel('Email').fill('eve@x.test');
        await visitor.getByLabel('Your name').fill('Eve');
        await visitor.getByLabel('Password').fill('eve password 123');
        await visitor.getByRole('button', { name: 'Create account' }).click();
        await visitor.getByRole('heading', { level: 1, name: 'Projects' }).waitFor(WAIT);
        assert.match(await textOf(visitor.locator('header.topbar')), /Eve’s team[\s\S]*eve@x\.test/);
        await visitor.context().close();

        // Where it is closed, the page reached directly says so in the API's words.
        const closed = await guest(`${base}/sign-up`);
        await closed.getByLabel('Email').fill('fay@x.test');
        await closed.getByLabel('Your name').fill('Fay');
        await closed.getByLabel('Password').fill('fay password 123');
        await closed.getByRole('button', { name: 'Create account' }).click();
        const refused = closed.getByRole('alert').filter({ hasText: 'Sign-up is closed' });
        await expectText(refused, /ask a team owner to invite you[\s\S]*sign_up_closed/);
        await closed.context().close();
      } finally {
        await openApp.close();
      }
    });
  });

  describe(`the invite result when this Kennel mails invitations (${dialect})`, () => {
    it('says the invitation was mailed and shows no link (it is only in the mail)', async () => {
      const smtp = new SmtpReceiver();
      const p = await startPlatformContext(dialect, { SMTP_URL: await smtp.start() });
      p.clock.set(Date.now());
      let dashboard: Dashboard | undefined;
      try {
        const { team } = await seedTeam(p.ctx);
        dashboard = await startDashboard(p);
        const { base } = dashboard;
        const owner = await dashboard.signedIn('owner@x.test', 'owner password 1');
        await owner.goto(`${base}/teams/${team.id}/people`);
        await owner.getByLabel('Email').fill('mia@x.test');
        await owner.getByRole('button', { name: 'Invite', exact: true }).click();
        const mailed = owner.locator('[data-testid="invitation-mailed"]');
        await expectText(
          mailed,
          /^Invitation mailed to mia@x\.test\s*The link is only in that mail, so only whoever reads that address can accept it\.\s*Works once, until .+\.$/s,
        );
        assert.equal(await owner.locator('[data-testid="invitation-link"]').count(), 0);
        assert.equal(await owner.locator('[data-field="secret"]').count(), 0);
        assert.deepEqual(await accessibilityViolations(owner), []);
        assert.deepEqual(
          smtp.mails.map((m) => m.to),
          [['mia@x.test']],
        );
      } finally {
        await closeAll(dashboard, p, smtp);
      }
    });
  });
}
