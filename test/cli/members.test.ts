import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTeam } from '../../src/platform/accounts/teams.ts';
import { authenticate } from '../../src/platform/accounts/users.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import { cliUser, show } from '../support/cli-setup.ts';
import { type CliServer, startCliServer, USERS } from './harness.ts';

// The CLI talks HTTP only, so one database is enough here; test/platform/people.test.ts runs both.
describe('kennel members and kennel password', () => {
  let server: CliServer;
  let teamId = 0;
  const owner = cliUser(() => server.url);
  const invitee = cliUser(() => server.url);

  before(async () => {
    server = await startCliServer('sqlite');
    const ctx = server.platform.ctx;
    const ownerActor = await authenticate(ctx, USERS.owner.email, USERS.owner.password);
    teamId = (await createTeam(ctx, ownerActor, 'Shop')).id;
    await owner.login(USERS.owner);
  });
  after(async () => {
    await server?.close();
  });

  it('invites with a token shown once; the invitee accepts, signs in and is listed as member', async () => {
    const invited = await owner.run(['members', 'invite', String(teamId), 'ana@x.test']);
    assert.equal(invited.code, 0, show(invited));
    const token = /^ {2}(kin_[\w-]{43})$/m.exec(invited.stdout)?.[1];
    assert.ok(token, show(invited));
    // The dashboard's link carries the same token in its fragment.
    assert.match(
      invited.stdout,
      new RegExp(`^They accept in a browser at http://[^/]+/invitations/accept#token=${token}$`, 'm'),
    );
    assert.match(
      invited.stdout,
      /^Invited ana@x\.test to team \d+ \(invitation \d+, until 2026-11-29T12:00:00\.000Z\)\.$/m,
    );

    const accepted = await invitee.run(
      ['members', 'accept', token, '--name', 'Ana Lima', '--password-stdin'],
      'ana password 123\n',
    );
    assert.equal(accepted.code, 0, show(accepted));
    assert.equal(
      accepted.stdout,
      `ana@x.test joined team ${teamId} as member. Sign in with: kennel login --email ana@x.test\n`,
    );
    const again = await invitee.run(['members', 'accept', token, '--password-stdin'], 'ana password 123\n');
    assert.equal(again.code, 1, show(again));
    assert.match(again.stderr, /\(invitation_not_valid\)$/m);

    const login = await invitee.run(
      ['login', '--email', 'ana@x.test', '--password-stdin'],
      'ana password 123\n',
    );
    assert.equal(login.code, 0, show(login));
    const listed = await invitee.run(['members', 'list', String(teamId)]);
    assert.equal(listed.code, 0, show(listed));
    assert.match(listed.stdout, /^User ID\s+Email\s+Name\s+Role\s+Since$/m);
    assert.match(listed.stdout, /ana@x\.test\s+Ana Lima\s+member\s+2026-11-22/);
    assert.match(listed.stdout, /owner@x\.test\s+—\s+owner/);

    // A member cannot invite; the owner's invitation list shows it accepted.
    const refused = await invitee.run(['members', 'invite', String(teamId), 'bo@x.test']);
    assert.equal(refused.code, 1, show(refused));
    assert.match(refused.stderr, /\(forbidden\)$/m);
    const invitations = JSON.parse(
      (await owner.run(['members', 'invitations', String(teamId), '--json'])).stdout,
    );
    assert.deepEqual(
      invitations.map((i: { email: string; status: string }) => [i.email, i.status]),
      [['ana@x.test', 'accepted']],
    );
  });

  it('keeps the last owner; roles, reset tokens and password changes work from the CLI', async () => {
    const ownerId = (await authenticate(server.platform.ctx, USERS.owner.email, USERS.owner.password)).userId;
    const leave = await owner.run(['members', 'leave', String(teamId)]);
    assert.equal(leave.code, 1, show(leave));
    assert.match(
      leave.stderr,
      /last owner of the team "[^"]+": make another member owner first\. \(last_owner\)$/m,
    );
    const members = JSON.parse((await owner.run(['members', 'list', String(teamId), '--json'])).stdout) as {
      userId: number;
      email: string;
    }[];
    const ana = members.find((m) => m.email === 'ana@x.test')?.userId as number;
    const badRole = await owner.run(['members', 'set-role', String(teamId), String(ana), 'boss']);
    assert.equal(badRole.code, 2, show(badRole));

    const reset = await owner.run(['members', 'reset-password', String(teamId), String(ana)]);
    assert.equal(reset.code, 0, show(reset));
    const resetToken = /^ {2}(krs_[\w-]{43})$/m.exec(reset.stdout)?.[1] as string;
    assert.ok(resetToken, show(reset));
    const set = await invitee.run(
      ['password', 'reset', resetToken, '--password-stdin'],
      'ana password 456\n',
    );
    assert.equal(set.code, 0, show(set));
    assert.equal(
      set.stdout,
      // Ana's CLI login token is revoked with the reset (whoever held the password kept nothing).
      'The password of ana@x.test is set. Signed out 0 session(s) and revoked 1 API token(s).\nSign in with: kennel login --email ana@x.test\n',
    );
    await authenticate(server.platform.ctx, 'ana@x.test', 'ana password 456');
    // The reset revoked Ana's saved CLI token: commands need a new sign-in.
    const revoked = await invitee.run(['members', 'list', String(teamId)]);
    assert.equal(revoked.code, 3, show(revoked));
    const relogin = await invitee.run(
      ['login', '--email', 'ana@x.test', '--password-stdin'],
      'ana password 456\n',
    );
    assert.equal(relogin.code, 0, show(relogin));

    const change = await invitee.run(
      ['password', 'change', '--password-stdin'],
      'ana password 456\nana password 789\n',
    );
    assert.equal(change.code, 0, show(change));
    await authenticate(server.platform.ctx, 'ana@x.test', 'ana password 789');
    const wrong = await invitee.run(
      ['password', 'change', '--password-stdin'],
      'not it at all\nana password 000\n',
    );
    assert.equal(wrong.code, 1, show(wrong));
    assert.match(wrong.stderr, /\(wrong_current_password\)$/m);

    const promoted = await owner.run(['members', 'set-role', String(teamId), String(ana), 'owner']);
    assert.equal(promoted.code, 0, show(promoted));
    assert.equal(promoted.stdout, `ana@x.test is now owner of team ${teamId}.\n`);
    const removed = await invitee.run(['members', 'remove', String(teamId), String(ownerId)]);
    assert.equal(removed.code, 0, show(removed));
    const gone = await owner.run(['members', 'list', String(teamId)]);
    assert.equal(gone.code, 1, show(gone));
    assert.match(gone.stderr, /\(team_not_found\)$/m);
  });

  it('renames a team, and deletes it once it has no projects', async () => {
    const ctx = server.platform.ctx;
    const ownerActor = await authenticate(ctx, USERS.owner.email, USERS.owner.password);
    const scratch = (await createTeam(ctx, ownerActor, 'Scratch')).id;
    const renamed = await owner.run(['teams', 'rename', String(scratch), 'Scratch pad']);
    assert.equal(renamed.code, 0, show(renamed));
    assert.equal(renamed.stdout, `Team ${scratch} is now "Scratch pad".\n`);

    await createProject(ctx, ownerActor, {
      teamId: scratch,
      slug: 'scratch',
      name: 'Scratch',
      originUrl: 'https://origin.example.com',
    });
    const refused = await owner.run(['teams', 'delete', String(scratch)]);
    assert.equal(refused.code, 1, show(refused));
    assert.match(
      refused.stderr,
      /^error: The team "Scratch pad" still has a project \(scratch\): delete it or move it to another team first, then delete the team\. \(team_has_projects\)$/m,
    );
    await ctx.db.deleteFrom('projects').where('slug', '=', 'scratch').execute();
    const deleted = await owner.run(['teams', 'delete', String(scratch)]);
    assert.equal(deleted.code, 0, show(deleted));
    assert.equal(deleted.stdout, `Deleted team ${scratch}.\n`);
    const list = await owner.run(['teams', 'list', '--json']);
    assert.deepEqual(
      (JSON.parse(list.stdout) as { id: number }[]).filter((t) => t.id === scratch),
      [],
    );
  });
});
