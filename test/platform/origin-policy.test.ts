import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createToken } from '../../src/platform/accounts/credentials.ts';
import { type ApiPlatform, bearerClient, type Client, startApiPlatform } from '../support/api-scenario.ts';
import { testDialects } from '../support/databases.ts';

const DOC = JSON.stringify({ openapi: '3.0.3', info: { title: 'T', version: '1' }, paths: {} });

/**
 * Origins a team member could use to make the edge connect into the operator's network (the
 * operator listener on 9464, a metadata service, a neighbour), each spelled as WHATWG URL parsing
 * allows, with the address the refusal names.
 */
const FORBIDDEN: [string, string][] = [
  ['http://127.0.0.1:9464', 'points at a loopback, private or reserved address (127.0.0.1)'],
  ['http://[::127.0.0.1]:9464', 'points at a loopback, private or reserved address (::7f00:1)'],
  ['http://[::ffff:7f00:1]:9464', 'points at a loopback, private or reserved address (::ffff:7f00:1)'],
  ['http://2130706433:9464/', 'points at a loopback, private or reserved address (127.0.0.1)'],
  ['http://0177.0.0.1:9464/', 'points at a loopback, private or reserved address (127.0.0.1)'],
  ['http://[64:ff9b::7f00:1]:9464', 'points at a loopback, private or reserved address (64:ff9b::7f00:1)'],
  ['http://[2002:7f00:1::]:9464', 'points at a loopback, private or reserved address (2002:7f00:1::)'],
  [
    'http://169.254.169.254/latest/meta-data',
    'points at a loopback, private or reserved address (169.254.169.254)',
  ],
  [
    'http://[64:ff9b::169.254.169.254]/latest',
    'points at a loopback, private or reserved address (64:ff9b::a9fe:a9fe)',
  ],
  ['http://[fd00:ec2::254]/latest', 'points at a loopback, private or reserved address (fd00:ec2::254)'],
  ['http://100.100.100.200/latest', 'points at a loopback, private or reserved address (100.100.100.200)'],
  ['http://10.0.0.5:5432', 'points at a loopback, private or reserved address (10.0.0.5)'],
  ['http://[fe80::1]/', 'points at a loopback, private or reserved address (fe80::1)'],
  ['http://0.0.0.0:9464', 'points at a loopback, private or reserved address (0.0.0.0)'],
  ['http://localhost:9464', 'points at localhost, a loopback address'],
  ['http://metrics.localhost:9464', 'points at metrics.localhost, a loopback address'],
  // Granted to the team is http://127.0.0.1:4010 exactly: not another port, not another scheme.
  ['http://127.0.0.1:4011', 'points at a loopback, private or reserved address (127.0.0.1)'],
  ['https://127.0.0.1:4010', 'points at a loopback, private or reserved address (127.0.0.1)'],
];

for (const dialect of testDialects()) {
  describe(`project origins through the management API: address policy (${dialect})`, () => {
    let api: ApiPlatform;
    let teamId = 0;
    let send: Client;

    before(async () => {
      api = await startApiPlatform(dialect);
      teamId = api.team.id;
      send = api.asOwner;
      // What the team's Petstore runs on: a private origin a platform admin granted the team.
      const admin = bearerClient(api.app, (await createToken(api.p.ctx, api.admin, 'tests')).token);
      const granted = await admin('POST', '/api/v1/origin-grants', {
        teamId,
        origin: 'http://127.0.0.1:4010',
      });
      assert.equal(granted.status, 201, granted.text);
    });
    after(() => api?.close());
    /** POST /api/v1/projects in the team, as its owner. */
    const createProject = (slug: string, name: string, originUrl: string) =>
      send('POST', '/api/v1/projects', { teamId, slug, name, originUrl });

    it('refuses to create a project whose origin is not public, saying what to do', async () => {
      const answers = [];
      for (const [originUrl] of FORBIDDEN) {
        const answer = await createProject('probe', 'Probe', originUrl);
        answers.push([originUrl, answer.status, answer.body.code, answer.body.message]);
      }
      assert.deepEqual(
        answers,
        FORBIDDEN.map(([originUrl, reason]) => {
          const stored = new URL(originUrl).toString().replace(/\/$/, '');
          return [
            originUrl,
            422,
            'origin_not_allowed',
            `originUrl ${stored} ${reason}; projects may reach the platform's own network only with a grant. Use a public address, or ask a platform admin to grant team "Shop" the origin ${new URL(originUrl).origin}.`,
          ];
        }),
      );
      assert.deepEqual((await send('GET', '/api/v1/projects')).body, []);
    });

    it('still answers validation_failed for what is not an http(s) URL', async () => {
      const answer = await createProject('probe', 'Probe', 'gopher://127.0.0.1:9464');
      assert.deepEqual([answer.status, answer.body.code], [400, 'validation_failed']);
    });

    it("accepts the team's granted origin however it is spelled, and public origins", async () => {
      const allowed = await createProject('petstore', 'Petstore', 'http://2130706433:4010/');
      assert.equal(allowed.status, 201, JSON.stringify(allowed.body));
      assert.equal(allowed.body.originUrl, 'http://127.0.0.1:4010');
      for (const [slug, originUrl] of [
        ['shop', 'https://api.example.com/v1'],
        ['direct', 'http://93.184.216.34:8080'],
        ['nat64', 'http://[64:ff9b::5db8:d822]'],
      ] as const) {
        const created = await createProject(slug, slug, originUrl);
        assert.equal(created.status, 201, `${originUrl}: ${JSON.stringify(created.body)}`);
      }
    });

    it('refuses a deploy that moves the origin to a forbidden address, leaving project and deploys as they were', async () => {
      const first = await send('POST', '/api/v1/projects/shop/deploys', { document: DOC });
      assert.equal(first.status, 201);
      for (const [originUrl, reason] of [
        ['http://[::127.0.0.1]:9464', 'points at a loopback, private or reserved address (::7f00:1)'],
        ['http://2130706433:9464', 'points at a loopback, private or reserved address (127.0.0.1)'],
        [
          'http://[64:ff9b::7f00:1]:9464',
          'points at a loopback, private or reserved address (64:ff9b::7f00:1)',
        ],
        ['http://169.254.169.254', 'points at a loopback, private or reserved address (169.254.169.254)'],
      ] as const) {
        const refused = await send('POST', '/api/v1/projects/shop/deploys', { document: DOC, originUrl });
        assert.equal(refused.status, 422);
        assert.equal(refused.body.code, 'origin_not_allowed');
        assert.ok(String(refused.body.message).includes(reason), String(refused.body.message));
      }
      const project = await send('GET', '/api/v1/projects/shop');
      assert.equal(project.body.originUrl, 'https://api.example.com/v1');
      const deploys = await send('GET', '/api/v1/projects/shop/deploys');
      assert.deepEqual(
        deploys.body.map((d) => (d as { id: number }).id),
        [first.body.id],
      );
      const moved = await send('POST', '/api/v1/projects/shop/deploys', {
        document: DOC,
        originUrl: 'http://127.0.0.1:4010',
      });
      assert.equal(moved.status, 201);
      assert.equal((await send('GET', '/api/v1/projects/shop')).body.originUrl, 'http://127.0.0.1:4010');
    });
  });
}
