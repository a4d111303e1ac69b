import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { addMember, createTeam } from '../../src/platform/accounts/teams.ts';
import { deployProject } from '../../src/platform/projects/deploys.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import { cliUser, show } from '../support/cli-setup.ts';
import { type CliServer, startCliServer, USERS } from './harness.ts';

const DOC = JSON.stringify({ openapi: '3.0.3', info: { title: 'T', version: '1' }, paths: {} });

// The CLI talks HTTP only, so one database is enough here; test/platform/project-settings.test.ts
// runs both.
describe('kennel projects rename, set-origin and delete', () => {
  let server: CliServer;
  const owner = cliUser(() => server.url);
  const member = cliUser(() => server.url);

  before(async () => {
    server = await startCliServer('sqlite');
    const { ctx } = server.platform;
    const team = await createTeam(ctx, server.actors.owner, 'Shop');
    await addMember(ctx, server.actors.owner, team.id, USERS.member.email, 'member');
    await createProject(ctx, server.actors.owner, {
      teamId: team.id,
      slug: 'shop',
      name: 'Shop',
      originUrl: 'https://api.shop-example.test',
    });
    await deployProject(ctx, server.actors.owner, 'shop', { document: DOC });
    await owner.login(USERS.owner);
    await member.login(USERS.member);
  });
  after(async () => {
    await server?.close();
  });

  it('renames a project and moves its origin; a private origin is refused with the policy message', async () => {
    const renamed = await member.run(['projects', 'rename', 'shop', 'Shop front']);
    assert.equal(renamed.code, 0, show(renamed));
    assert.equal(renamed.stdout, 'Project shop is now called "Shop front".\n');
    const moved = await member.run(['projects', 'set-origin', 'shop', 'https://api2.shop-example.test/']);
    assert.equal(moved.code, 0, show(moved));
    assert.equal(moved.stdout, "Requests to shop's API now go to https://api2.shop-example.test.\n");
    const refused = await member.run(['projects', 'set-origin', 'shop', 'http://192.168.1.10']);
    assert.equal(refused.code, 1, show(refused));
    assert.match(
      refused.stderr,
      /^error: originUrl http:\/\/192\.168\.1\.10 points at a loopback, private or reserved address \(192\.168\.1\.10\); .* \(origin_not_allowed\)$/m,
    );
  });

  it('deletes only with --yes off a terminal, for owners, and says what went', async () => {
    const unconfirmed = await owner.run(['projects', 'delete', 'shop']);
    assert.equal(unconfirmed.code, 2, show(unconfirmed));
    assert.match(
      unconfirmed.stderr,
      /^error: Deleting a project removes its domains, certificates and deploys for good: confirm with --yes \(there is no terminal to ask on\)\.$/m,
    );
    const byMember = await member.run(['projects', 'delete', 'shop', '--yes']);
    assert.equal(byMember.code, 1, show(byMember));
    assert.match(
      byMember.stderr,
      /^error: Only owners of team "Shop" can delete project shop\. Ask one of them\. \(forbidden\)$/m,
    );
    const deleted = await owner.run(['projects', 'delete', 'shop', '--yes', '--json']);
    assert.equal(deleted.code, 0, show(deleted));
    assert.deepEqual(JSON.parse(deleted.stdout), { slug: 'shop', domains: 0, certificates: 0, deploys: 1 });
    const gone = await owner.run(['projects', 'show', 'shop']);
    assert.equal(gone.code, 1, show(gone));
    assert.match(gone.stderr, /\(project_not_found\)$/m);
  });
});
