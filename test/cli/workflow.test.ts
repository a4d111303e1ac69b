import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cliUser, json, scratchDir, show } from '../support/cli-setup.ts';
import { testDialects } from '../support/databases.ts';
import type { TestDns } from '../support/dns.ts';
import { dnsEnv, petstoreZones, startZones } from '../support/platform-dns.ts';
import { type CliServer, startCliServer, USERS } from './harness.ts';

const VALID_DOC = JSON.stringify({
  openapi: '3.0.3',
  info: { title: 'Petstore', version: '1' },
  paths: { '/pets': { get: { responses: { 200: { description: 'Pets' } } } } },
});
const INVALID_DOC = 'openapi: 3.0.3\ninfo:\n  title: No version\npaths: {}\n';

for (const dialect of testDialects()) {
  describe(`the kennel CLI against the management API (${dialect})`, () => {
    let dns: TestDns;
    let server: CliServer;
    /** The owner's and the admin's CLI: signed in through the credentials file in their own config dir. */
    const owner = cliUser(() => server.url);
    const admin = cliUser(() => server.url);
    const files = scratchDir('kennel-cli-files-');
    const { file } = files;
    let teamId = 0;

    before(async () => {
      dns = await startZones(petstoreZones(['shop'], [{ name: 'blocked', type: 'A', value: '192.0.2.10' }]));
      server = await startCliServer(dialect, {
        ...dnsEnv(dns),
        // The Petstore's origin, as `npm start` allows it (for the bootstrap team only: the tenant
        // team below is granted it by the admin, kennel origins grant).
        KENNEL_ORIGIN_ALLOWLIST: 'http://127.0.0.1:4010',
      });
    });
    after(async () => {
      await server?.close();
      await dns?.stop();
      files.remove();
    });

    it('signs in with --password-stdin: the token is saved with mode 0600 and never printed', async () => {
      const wrong = await owner.run(['login', '--email', USERS.owner.email, '--password-stdin'], {
        input: 'not the password\n',
      });
      assert.equal(wrong.code, 3, show(wrong));
      assert.match(wrong.stderr, /^error: The email or the password is wrong.* \(invalid_credentials\)$/m);

      const result = await owner.run(['login', '--email', USERS.owner.email, '--password-stdin'], {
        input: `${USERS.owner.password}\n`,
      });
      assert.equal(result.code, 0, show(result));
      assert.match(result.stdout, /Signed in to http:\/\/127\.0\.0\.1:\d+ as owner@x\.test/);
      const path = join(owner.path, 'credentials.json');
      assert.equal(statSync(path).mode & 0o777, 0o600);
      const saved = JSON.parse(readFileSync(path, 'utf8')) as {
        server: string;
        token: string;
        email: string;
      };
      assert.equal(saved.server, server.url);
      assert.equal(saved.email, USERS.owner.email);
      assert.match(saved.token, /^knl_/);
      assert.ok(
        !result.stdout.includes(saved.token) && !result.stderr.includes(saved.token),
        'token printed',
      );

      const whoami = await owner.run(['whoami']);
      assert.equal(whoami.code, 0, show(whoami));
      assert.match(whoami.stdout, /^owner@x\.test\n/);
      assert.ok(!whoami.stdout.includes(saved.token));
      assert.deepEqual(json(await owner.run(['whoami', '--json'])), {
        email: USERS.owner.email,
        isAdmin: false,
      });
    });

    it('prints the token once with login --print-token, alone on stdout, usable as KENNEL_TOKEN', async () => {
      const result = await admin.run(
        ['login', '--email', USERS.admin.email, '--password-stdin', '--print-token'],
        USERS.admin.password,
      );
      assert.equal(result.code, 0, show(result));
      assert.match(result.stdout, /^knl_[\w-]+\n$/);
      assert.match(result.stderr, /Signed in .* as admin@x\.test \(platform admin\)/);
      const me = await owner.run(['whoami', '--json'], { env: { KENNEL_TOKEN: result.stdout.trim() } });
      assert.deepEqual(json(me), { email: USERS.admin.email, isAdmin: true });
    });

    it('creates a team, has an admin set its plan, and adds a member', async () => {
      const created = await owner.run(['teams', 'create', 'Shop', '--json']);
      assert.equal(created.code, 0, show(created));
      const team = json<{ id: number; name: string; plan: string; role: string }>(created);
      assert.deepEqual(
        { name: team.name, plan: team.plan, role: team.role },
        { name: 'Shop', plan: 'free', role: 'owner' },
      );
      teamId = team.id;

      const refused = await owner.run(['teams', 'set-plan', String(teamId), 'pro']);
      assert.equal(refused.code, 1, show(refused));
      assert.match(refused.stderr, /\(forbidden\)/);
      const setPlan = await admin.run(['teams', 'set-plan', String(teamId), 'pro']);
      assert.equal(setPlan.code, 0, show(setPlan));
      assert.match(setPlan.stdout, /is now on the pro plan/);

      const list = await owner.run(['teams', 'list']);
      assert.match(list.stdout, /^ID\s+Name\s+Plan\s+Role$/m);
      assert.match(list.stdout, new RegExp(`^${teamId}\\s+Shop\\s+pro\\s+owner$`, 'm'));
      // Adding a member is an invitation they accept (no SMTP here: the token is shown to pass on).
      const member = await owner.run(['teams', 'add-member', String(teamId), USERS.member.email, '--json']);
      const invited = json<{ email: string; role: string; status: string; mailed: boolean; token: string }>(
        member,
      );
      assert.deepEqual(
        [invited.email, invited.role, invited.status, invited.mailed],
        [USERS.member.email, 'member', 'pending', false],
      );
      const accepted = await owner.run(['members', 'accept', invited.token, '--password-stdin'], {
        input: `${USERS.member.password}\n`,
      });
      assert.equal(accepted.code, 0, show(accepted));
      assert.match(accepted.stdout, new RegExp(`^member@x\\.test joined team ${teamId} as member\\.`, 'm'));
      const told = await owner.run(['teams', 'add-member', String(teamId), 'ana@x.test', '--role', 'owner']);
      assert.equal(told.code, 0, show(told));
      assert.match(
        told.stdout,
        /^Invited ana@x\.test to team \d+ as owner \(invitation \d+, until \S+\); they join when they accept it\.$/m,
      );
      assert.match(
        told.stdout,
        /^Not mailed\. Invitation token \(shown this once; send it to them over a channel you trust\):\n {2}kin_[\w-]{43}$/m,
      );
      const badRole = await owner.run([
        'teams',
        'add-member',
        String(teamId),
        USERS.member.email,
        '--role',
        'boss',
      ]);
      assert.equal(badRole.code, 2, show(badRole));
    });

    it('creates a project and shows it, with --json printing the API body', async () => {
      /** kennel projects create of team Shop's petstore, on `origin`. */
      const create = (origin: string, ...more: string[]) =>
        owner.run([
          'projects',
          'create',
          '--team',
          String(teamId),
          ...'--slug petstore --name Petstore'.split(' '),
          '--origin',
          origin,
          ...more,
        ]);
      const operator = await create('http://127.0.0.1:9464');
      assert.equal(operator.code, 1, show(operator));
      assert.match(
        operator.stderr,
        /^error: originUrl http:\/\/127\.0\.0\.1:9464 points at a loopback, private or reserved address \(127\.0\.0\.1\); .*ask a platform admin to grant team "Shop" the origin http:\/\/127\.0\.0\.1:9464\. \(origin_not_allowed\)$/m,
      );
      const notGranted = await owner.run(['origins', 'grant', String(teamId), 'http://127.0.0.1:4010']);
      assert.equal(notGranted.code, 1, show(notGranted));
      assert.match(notGranted.stderr, /\(forbidden\)/);
      const granted = await admin.run(['origins', 'grant', String(teamId), 'http://127.0.0.1:4010']);
      assert.equal(granted.code, 0, show(granted));
      assert.match(
        granted.stdout,
        new RegExp(
          `^Team ${teamId} "Shop" may use http://127\\.0\\.0\\.1:4010 \\(grant \\d+; revoke with kennel origins revoke \\d+\\)\\.$`,
          'm',
        ),
      );
      const grants = await admin.run(['origins', 'list']);
      assert.match(
        grants.stdout,
        new RegExp(`^\\d+\\s+${teamId} Shop\\s+http://127\\.0\\.0\\.1:4010\\s+admin@x\\.test\\s+`, 'm'),
      );
      const created = await create('http://127.0.0.1:4010', '--json');
      assert.equal(created.code, 0, show(created));
      const project = json(created);
      assert.equal(project.slug, 'petstore');
      assert.equal(project.defaultHost, 'petstore.platform.test');
      const shown = await owner.run(['projects', 'show', 'petstore', '--json']);
      assert.equal(shown.code, 0, show(shown));
      assert.equal(shown.stderr, '');
      assert.deepEqual(json(shown), project);
      const human = await owner.run(['projects', 'show', 'petstore']);
      assert.match(human.stdout, /Default address:\s+petstore\.platform\.test/);
      const list = await owner.run(['projects', 'list']);
      assert.match(list.stdout, /^petstore\s+Petstore\s+\d+\s+pro\s+petstore\.platform\.test/m);

      const missing = await owner.run(['projects', 'show', 'nope', '--json']);
      assert.equal(missing.code, 1, show(missing));
      assert.equal(json(missing).code, 'project_not_found');
      assert.match(missing.stderr, /^error: .* \(project_not_found\)$/m);
    });

    it('deploys a valid document, and reports a failed deploy with its problems (exit 1)', async () => {
      const ok = await owner.run(['deploy', 'petstore', file('openapi.json', VALID_DOC)]);
      assert.equal(ok.code, 0, show(ok));
      assert.match(ok.stdout, /^Deploy #1 \(deploy \d+\) of petstore succeeded \(json\); it is now live/m);

      const failed = await owner.run(['deploy', 'petstore', file('broken.yaml', INVALID_DOC)]);
      assert.equal(failed.code, 1, show(failed));
      assert.match(
        failed.stdout,
        /^Deploy #2 \(deploy \d+\) of petstore failed; the live deploy is unchanged/m,
      );
      assert.match(failed.stdout, /^ {2}- \/info\b.*version/m);

      const failedJson = await owner.run(['deploy', 'petstore', join(files.path, 'broken.yaml'), '--json']);
      assert.equal(failedJson.code, 1);
      const deploy = json<{ status: string; problems: string[] }>(failedJson);
      assert.equal(deploy.status, 'failed');
      assert.ok(deploy.problems.length > 0);

      const missingFile = await owner.run(['deploy', 'petstore', join(files.path, 'absent.yaml')]);
      assert.equal(missingFile.code, 1, show(missingFile));
      assert.match(missingFile.stderr, /Cannot read .*absent\.yaml: no such file/);

      const history = await owner.run(['projects', 'deploys', 'petstore', '--json']);
      assert.deepEqual(
        json<{ status: string; active: boolean }[]>(history).map((d) => [d.status, d.active]),
        [
          ['failed', false],
          ['failed', false],
          ['succeeded', true],
        ],
      );
    });

    it('adds a domain and prints the DNS record to create as a table', async () => {
      const result = await owner.run(['domains', 'add', 'petstore', 'shop.example.test']);
      assert.equal(result.code, 0, show(result));
      assert.match(result.stdout, /^ {2}Type\s+Name\s+Value\s+TTL$/m);
      assert.match(result.stdout, /^ {2}CNAME\s+shop\s+petstore\.platform\.test\s+3600$/m);
      assert.match(result.stdout, /DNS already points at the platform/);

      const blocked = await owner.run(['domains', 'add', 'petstore', 'blocked.example.test', '--json']);
      assert.equal(blocked.code, 0, show(blocked));
      const body = json<{ domain: { state: string }; dns: { check: { reason: string } } }>(blocked);
      assert.equal(body.domain.state, 'unverified');
      assert.equal(body.dns.check.reason, 'conflicting_record');

      const again = await owner.run(['domains', 'add', 'petstore', 'shop.example.test']);
      assert.equal(again.code, 1, show(again));
      assert.match(again.stderr, /\(domain_already_added\)/);
    });

    it('verifies a domain against real DNS (exit 0) and explains a failure with its remedy (exit 1)', async () => {
      const ok = await owner.run(['domains', 'verify', 'petstore', 'shop.example.test']);
      assert.equal(ok.code, 0, show(ok));
      assert.match(ok.stdout, /✓ shop\.example\.test is verified\./);
      assert.equal(ok.stderr, '', 'no progress output off a terminal');

      const failed = await owner.run(['domains', 'verify', 'petstore', 'blocked.example.test']);
      assert.equal(failed.code, 1, show(failed));
      assert.match(failed.stdout, /✗ blocked\.example\.test is not verified \(conflicting_record\)/);
      assert.match(failed.stdout, /Remedy:\s+Remove the conflicting A\/AAAA record and create the CNAME/);
      assert.match(failed.stdout, /CNAME\s+blocked\s+petstore\.platform\.test\s+3600/);

      const failedJson = await owner.run(['domains', 'verify', 'petstore', 'blocked.example.test', '--json']);
      assert.equal(failedJson.code, 1);
      assert.equal(json<{ outcome: { ok: boolean } }>(failedJson).outcome.ok, false);
    });

    it('keeps verifying with --wait until DNS shows the record, and gives up at --timeout', async () => {
      const added = await owner.run(['domains', 'add', 'petstore', 'later.example.test']);
      assert.equal(added.code, 0, show(added));
      let recordAdded: Promise<void> | undefined;
      const waited = await owner.run(
        [
          'domains',
          'verify',
          'petstore',
          'later.example.test',
          '--wait',
          '--interval',
          '1s',
          '--timeout',
          '60s',
        ],
        {
          onStderr: (soFar) => {
            if (
              recordAdded === undefined &&
              /Check 1: later\.example\.test is not verified yet/.test(soFar)
            ) {
              recordAdded = dns.addRecord('example.test', {
                name: 'later',
                type: 'CNAME',
                value: 'petstore.platform.test',
              });
            }
          },
        },
      );
      await recordAdded;
      assert.equal(waited.code, 0, show(waited));
      assert.match(waited.stderr, /Checking again in 1s; giving up in (\d+m )?\d+s\./);
      assert.match(waited.stdout, /✓ later\.example\.test is verified\./);

      const gaveUp = await owner.run([
        'domains',
        'verify',
        'petstore',
        'blocked.example.test',
        '--wait',
        '--interval',
        '1s',
        '--timeout',
        '2s',
      ]);
      assert.equal(gaveUp.code, 1, show(gaveUp));
      assert.match(
        gaveUp.stdout,
        /not verified \(conflicting_record\): still not verified after \d+ checks in 2s/,
      );
      const misuse = await owner.run([
        'domains',
        'verify',
        'petstore',
        'blocked.example.test',
        '--timeout',
        '2s',
      ]);
      assert.equal(misuse.code, 2, show(misuse));
    });

    it('inspects a domain: state, remedy, records and history', async () => {
      const human = await owner.run(['domains', 'inspect', 'petstore', 'blocked.example.test']);
      assert.equal(human.code, 0, show(human));
      assert.match(human.stdout, /^Status:\s+failed$/m, 'a conflicting record needs the owner: failed');
      assert.match(human.stdout, /^State:\s+unverified$/m);
      assert.match(human.stdout, /^Certificate:\s+-$/m, 'no certificate before verification');
      assert.match(human.stdout, /^Reason:\s+conflicting_record$/m);
      assert.match(human.stdout, /^Remedy:\s+Remove the conflicting/m);
      assert.match(human.stdout, /^History:$/m);
      assert.match(human.stdout, /user:owner@x\.test\s+add\s+unverified/);
      assert.match(human.stdout, /user:owner@x\.test\s+verify\s+unverified/);

      const detail = json<{ domain: { state: string }; history: { action: string }[] }>(
        await owner.run(['domains', 'inspect', 'petstore', 'shop.example.test', '--json']),
      );
      assert.equal(detail.domain.state, 'verified');
      const shop = await owner.run(['domains', 'inspect', 'petstore', 'shop.example.test']);
      assert.match(shop.stdout, /^Status:\s+issuing$/m, 'verified, its certificate not yet issued');
      assert.match(shop.stdout, /^Certificate:\s+pending$/m);
      assert.match(shop.stdout, /^Next attempt:\s+\d{4}-\d\d-\d\dT/m);
      assert.deepEqual(
        detail.history.map((e) => e.action),
        ['add', 'verify'],
      );
      const list = await owner.run(['domains', 'list', 'petstore']);
      assert.match(
        list.stdout,
        /^Hostname\s+State\s+Reason\s+Status\s+Certificate\s+Verified\s+Last check$/m,
      );
      assert.match(list.stdout, /^shop\.example\.test\s+verified\s+-\s+issuing\s+pending\s+\d{4}-/m);
      assert.match(
        list.stdout,
        /^blocked\.example\.test\s+unverified\s+conflicting_record\s+failed\s+-\s+-\s+\d{4}-/m,
      );
      const missing = await owner.run(['domains', 'inspect', 'petstore', 'nope.example.test']);
      assert.equal(missing.code, 1, show(missing));
      assert.match(missing.stderr, /\(domain_not_found\)/);
    });

    it('shows a failed certificate with its reason and remedy, and Verify retries it instead of saying "Nothing to do"', async () => {
      const { db } = server.platform.ctx;
      const shopId = (
        await db
          .selectFrom('domains')
          .select('id')
          .where('hostname', '=', 'shop.example.test')
          .executeTakeFirstOrThrow()
      ).id;
      // What the certificate job records when a CAA record forbids the CA.
      await db
        .updateTable('certificate_jobs')
        .set({ state: 'failed', reason: 'caa_forbids', next_attempt_at: null })
        .where('domain_id', '=', shopId)
        .execute();
      const inspected = await owner.run(['domains', 'inspect', 'petstore', 'shop.example.test']);
      assert.match(inspected.stdout, /^Status:\s+failed$/m);
      assert.match(inspected.stdout, /^Reason:\s+caa_forbids$/m);
      assert.match(
        inspected.stdout,
        /^Remedy:\s+Fix the CAA records: .* then verify again: it retries the certificate at once\.$/m,
      );
      const listed = await owner.run(['domains', 'list', 'petstore']);
      assert.match(listed.stdout, /^shop\.example\.test\s+verified\s+caa_forbids\s+failed\s+failed\s+/m);
      const early = await owner.run(['domains', 'reverify', 'petstore', 'shop.example.test']);
      assert.equal(early.code, 1, show(early));
      assert.match(
        early.stderr,
        /failed \(a CAA record forbids the certificate authority\)\. .*verify again to retry now\. Re-verify is offered from /,
      );
      const verified = await owner.run(['domains', 'verify', 'petstore', 'shop.example.test']);
      assert.equal(verified.code, 0, show(verified));
      assert.doesNotMatch(verified.stdout, /Nothing to do/);
      assert.match(
        verified.stdout,
        /^ {2}Next:\s+The certificate is being ordered \(from \S+\); it is usually issued within a couple of minutes\.$/m,
      );
    });

    it('re-verifies only when offered: refused at first, accepted after 30 minutes without a certificate', async () => {
      const early = await owner.run(['domains', 'reverify', 'petstore', 'shop.example.test']);
      assert.equal(early.code, 1, show(early));
      assert.match(early.stderr, /\(reverify_not_available\)/);
      server.platform.clock.advance(31 * 60_000);
      const later = await owner.run(['domains', 'reverify', 'petstore', 'shop.example.test']);
      assert.equal(later.code, 0, show(later));
      assert.match(later.stdout, /✓ shop\.example\.test is verified\./);
    });

    it('round-trips export → apply, and refuses an invalid file with line and column (exit 1)', async () => {
      const exported = await owner.run(['domains', 'export', 'petstore']);
      assert.equal(exported.code, 0, show(exported));
      assert.match(
        exported.stdout,
        /names:\n {4}- blocked\.example\.test\n {4}- later\.example\.test\n {4}- shop\.example\.test/,
      );
      const applied = await owner.run(['domains', 'apply', 'petstore', file('same.yaml', exported.stdout)]);
      assert.equal(applied.code, 0, show(applied));
      assert.match(applied.stdout, /^Added:\s+none$/m);
      assert.match(applied.stdout, /^Removed:\s+none$/m);
      assert.equal((await owner.run(['domains', 'export', 'petstore'])).stdout, exported.stdout);

      const edited = `domains:
  primary: shop.example.test
  redirects:
    - from: later.example.test
      to: shop.example.test
      status: 301
  names:
    - shop.example.test
    - later.example.test
    - blocked.example.test
    - www.example.test
`;
      const changed = await owner.run([
        'domains',
        'apply',
        'petstore',
        file('edited.yaml', edited),
        '--json',
      ]);
      assert.equal(changed.code, 0, show(changed));
      const result = json<{ added: string[]; removed: string[]; yaml: string }>(changed);
      assert.deepEqual(result.added, ['www.example.test']);
      const roundTrip = await owner.run(['domains', 'export', 'petstore']);
      assert.equal(roundTrip.stdout, result.yaml);
      assert.match(roundTrip.stdout, /primary: shop\.example\.test/);
      const again = await owner.run(['domains', 'apply', 'petstore', file('again.yaml', roundTrip.stdout)]);
      assert.match(again.stdout, /^Added:\s+none$/m);
      assert.equal((await owner.run(['domains', 'export', 'petstore'])).stdout, roundTrip.stdout);

      const invalid = await owner.run([
        'domains',
        'apply',
        'petstore',
        file('invalid.yaml', 'domains:\n  primary: elsewhere.example.test\n'),
      ]);
      assert.equal(invalid.code, 1, show(invalid));
      assert.match(
        invalid.stderr,
        /^error: The domain configuration is not valid; nothing was changed\. \(invalid_domain_config\)$/m,
      );
      assert.match(
        invalid.stderr,
        /^ {2}line 2, column 12 \(domains\.primary\): .*elsewhere\.example\.test/m,
      );
      assert.equal(invalid.stdout, '');
      assert.equal((await owner.run(['domains', 'export', 'petstore'])).stdout, roundTrip.stdout);
    });

    it('removes a domain with --yes, and refuses without it off a terminal (exit 2)', async () => {
      const refused = await owner.run(['domains', 'remove', 'petstore', 'www.example.test']);
      assert.equal(refused.code, 2, show(refused));
      assert.match(refused.stderr, /confirm with --yes/);
      const removed = await owner.run(['domains', 'remove', 'petstore', 'www.example.test', '--yes']);
      assert.equal(removed.code, 0, show(removed));
      assert.match(removed.stdout, /Removed www\.example\.test from petstore/);
      const hostnames = json<{ hostname: string }[]>(
        await owner.run(['domains', 'list', 'petstore', '--json']),
      ).map((d) => d.hostname);
      assert.deepEqual(hostnames, ['shop.example.test', 'blocked.example.test', 'later.example.test']);
      const twice = await owner.run(['domains', 'remove', 'petstore', 'www.example.test', '-y']);
      assert.equal(twice.code, 1, show(twice));
      assert.match(twice.stderr, /\(domain_not_found\)/);
    });

    it('exits 3 for a rejected token, and logs out by revoking the saved token', async () => {
      const bogus = await owner.run(['projects', 'list'], { env: { KENNEL_TOKEN: 'knl_not-a-token' } });
      assert.equal(bogus.code, 3, show(bogus));
      assert.match(bogus.stderr, /^error: The API token is not valid .* \(unauthenticated\)$/m);

      const path = join(owner.path, 'credentials.json');
      const { token } = JSON.parse(readFileSync(path, 'utf8')) as { token: string };
      const out = await owner.run(['logout']);
      assert.equal(out.code, 0, show(out));
      assert.match(out.stdout, /the token is revoked/);
      assert.throws(() => statSync(path), /ENOENT/);
      const revoked = await owner.run(['whoami'], { env: { KENNEL_TOKEN: token } });
      assert.equal(revoked.code, 3, show(revoked));
      const signedOut = await owner.run(['whoami']);
      assert.equal(signedOut.code, 3, show(signedOut));
      assert.match(signedOut.stderr, /Not signed in to http:\/\/127\.0\.0\.1:\d+/);
      const again = await owner.run(['logout']);
      assert.equal(again.code, 0, show(again));
      assert.match(again.stdout, /Not signed in/);
    });
  });
}
