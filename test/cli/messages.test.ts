import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { NEXT_STEPS } from '../../src/cli/next-steps.ts';
import { allCommands } from '../../src/cli/registry.ts';
import { addDomain } from '../../src/platform/domains/add-domain.ts';
import { verifyDomain } from '../../src/platform/domains/verify-domain.ts';
import { platformErrors } from '../../src/platform/errors.ts';
import { type CliTeam, show, startCliTeam } from '../support/cli-setup.ts';
import { testDialects } from '../support/databases.ts';
import type { TestDns } from '../support/dns.ts';
import { internalCertificates } from '../support/platform-certificates.ts';
import { dnsEnv, petstoreZones, startZones } from '../support/platform-dns.ts';
import { kennel, ROOT } from './harness.ts';

const DOC = JSON.stringify({
  openapi: '3.0.3',
  info: { title: 'Petstore', version: '1' },
  paths: { '/pets': { get: { responses: { 200: { description: 'Pets' } } } } },
});

/** What a CLI user must not be sent to: another client's place, or raw API routes. */
const ELSEWHERE = /dashboard|click|(GET|PUT|POST|DELETE) \/api\//i;

describe("the CLI's next steps for API errors (src/cli/next-steps.ts)", () => {
  it('are keyed by codes the platform has, and name commands the CLI has', () => {
    const codes = Object.keys(platformErrors.specs);
    const commands = allCommands().map((c) => c.name);
    for (const [code, step] of Object.entries(NEXT_STEPS)) {
      assert.ok(codes.includes(code), `${code} is a platform error code`);
      const line = step({ SLUG: 'petstore', HOSTNAME: 'shop.example.com', TEAM_ID: '7' }) ?? '';
      const words = /^kennel ([a-z-]+(?: [a-z-]+)?)/.exec(line)?.[1] ?? '';
      assert.ok(
        commands.includes(words) || commands.includes(words.split(' ')[0] ?? ''),
        `${code}: "${line}" names a command`,
      );
    }
  });

  it("leaves the platform's error messages free of one client's place", () => {
    const dir = join(ROOT, 'src', 'platform');
    const offenders = readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) =>
        readFileSync(join(dir, f), 'utf8')
          .split('\n')
          .map((line, i) => ({ where: `${f}:${i + 1}`, line }))
          // Comments may speak of the button; messages may not.
          .filter(({ line }) => !/^\s*(\/\/|\*|\/\*)/.test(line))
          .filter(({ line }) =>
            /shown in the dashboard|click Verify|List (yours|them|its \w+) with|Set one with|Inspect it with kennel|\(kennel \w+\)/.test(
              line,
            ),
          )
          .map(({ where }) => where),
      );
    assert.deepEqual(offenders, []);
  });
});

for (const dialect of testDialects()) {
  describe(`kennel messages name the CLI, and verify on a live domain says it is live (${dialect})`, () => {
    let dns: TestDns;
    let team: CliTeam;
    const cli = (args: string[]) => team.kennel(...args);

    before(async () => {
      dns = await startZones(petstoreZones(['shop'], [{ name: 'blocked', type: 'A', value: '192.0.2.10' }]));
      team = await startCliTeam(dialect, {
        env: { ...dnsEnv(dns), KENNEL_ORIGIN_ALLOWLIST: 'http://127.0.0.1:4010' },
        plan: 'pro',
        projects: [{ slug: 'petstore', name: 'Petstore', originUrl: 'http://127.0.0.1:4010', document: DOC }],
      });
      const { ctx } = team;
      const { owner } = team.server.actors;
      await addDomain(ctx, owner, 'petstore', 'shop.example.test');
      await addDomain(ctx, owner, 'petstore', 'blocked.example.test');
      await verifyDomain(ctx, owner, 'petstore', 'shop.example.test');
      // The certificate job with the real internal CA: shop.example.test goes live.
      const certificates = await internalCertificates(team.server.platform);
      assert.deepEqual(await certificates.issueDue('test'), ['shop.example.test']);
    });
    after(async () => {
      await team?.close();
      await dns?.stop();
    });

    it('domains verify on a live domain says it is live, with the certificate expiry (exit 0)', async () => {
      const inspect = await cli(['domains', 'inspect', 'petstore', 'shop.example.test', '--json']);
      const notAfter = (JSON.parse(inspect.stdout) as { domain: { certificate: { notAfter: string } } })
        .domain.certificate.notAfter;
      assert.match(notAfter, /^\d{4}-\d\d-\d\dT/);
      const result = await cli(['domains', 'verify', 'petstore', 'shop.example.test']);
      assert.equal(result.code, 0, show(result));
      assert.equal(
        result.stdout.split('\n')[0],
        `✓ shop.example.test is live: served over HTTPS with a certificate valid until ${notAfter}. There is nothing to verify.`,
      );
      assert.match(result.stdout, /^ {2}Renewal:\s+automatic, before the certificate expires$/m);
      assert.doesNotMatch(result.stdout, /verifying|is verified\b/i);
      const waited = await cli(['domains', 'verify', 'petstore', 'shop.example.test', '--wait']);
      assert.equal(waited.code, 0, show(waited));
      assert.match(waited.stdout, /^✓ shop\.example\.test is live: /);
    });

    it('a failed verification names the next CLI command, not the dashboard or a button', async () => {
      const result = await cli(['domains', 'verify', 'petstore', 'blocked.example.test']);
      assert.equal(result.code, 1, show(result));
      assert.match(
        result.stdout,
        /^ {2}Remedy:\s+Remove the conflicting A\/AAAA record and create the CNAME listed for this domain, then verify again\.$/m,
      );
      assert.match(
        result.stdout,
        /^ {2}Then: kennel domains verify petstore blocked\.example\.test --wait$/m,
      );
      assert.doesNotMatch(result.stdout + result.stderr, ELSEWHERE);
    });

    it('API errors end with the CLI command that helps (one table, by error code)', async () => {
      const cases: [string[], string, string][] = [
        [
          ['projects', 'show', 'nope'],
          'No project "nope" is visible to you: check the slug against the list of your projects. (project_not_found)',
          'kennel projects list',
        ],
        [
          ['domains', 'inspect', 'petstore', 'nope.example.test'],
          "Project petstore has no domain nope.example.test: check the hostname against the project's list of domains. (domain_not_found)",
          'kennel domains list petstore',
        ],
        [
          ['domains', 'add', 'petstore', 'shop.example.test'],
          'shop.example.test is already a domain of petstore: open it to see its state and records. (domain_already_added)',
          'kennel domains inspect petstore shop.example.test',
        ],
        [
          ['webhooks', 'show', 'TEAM'],
          'Team TEAM has no webhook endpoint: set its URL first. (webhook_not_found)',
          'kennel webhooks set TEAM URL',
        ],
        [
          ['members', 'list', '99999'],
          'No team with id 99999 is visible to you: check the id against the list of your teams. (team_not_found)',
          'kennel teams list',
        ],
      ];
      for (const [args, message, next] of cases) {
        const argv = args.map((a) => (a === 'TEAM' ? String(team.teamId) : a));
        const result = await cli(argv);
        const name = `kennel ${argv.join(' ')}`;
        assert.equal(result.code, 1, `${name}: ${show(result)}`);
        assert.equal(
          result.stderr,
          `error: ${message.replaceAll('TEAM', String(team.teamId))}\n  Next: ${next.replaceAll('TEAM', String(team.teamId))}\n`,
          name,
        );
        assert.doesNotMatch(result.stderr, ELSEWHERE, name);
      }
      // --json keeps the API's body as it is, on stdout.
      const json = await cli(['projects', 'show', 'nope', '--json']);
      assert.deepEqual(JSON.parse(json.stdout), {
        code: 'project_not_found',
        message: 'No project "nope" is visible to you: check the slug against the list of your projects.',
        status: 404,
      });
    });

    it('a revoked or mistyped token is sent to kennel login (exit 3)', async () => {
      const result = await kennel(['projects', 'list'], {
        env: { ...team.env, KENNEL_TOKEN: 'knl_not_a_token' },
      });
      assert.equal(result.code, 3, show(result));
      assert.equal(
        result.stderr,
        'error: The API token is not valid (revoked, or mistyped): sign in again to create a new one. (unauthenticated)\n  Next: kennel login (or set KENNEL_TOKEN to a valid token)\n',
      );
    });
  });
}
