import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { loadPlatformConfig } from '../../src/config/index.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import { startApiPlatform, statusAndBody } from '../support/api-scenario.ts';
import { testDialects } from '../support/databases.ts';

/**
 * Issue 25: a YAML deploy with a 1 MB anchored string aliased 98 times was accepted and grew the
 * database to 192 MB. A document is measured once parsed (aliases expanded) and refused, 413 or
 * 422 with the Error body, before anything is stored; old deploys are pruned.
 */
const operation = { responses: { 200: { description: 'ok' } } };
const openapi = (extra: Record<string, unknown> = {}, paths: Record<string, unknown> = {}) => ({
  openapi: '3.0.3',
  info: { title: 'T', version: '1' },
  paths,
  ...extra,
});
const VALID = JSON.stringify(openapi());
const withPaths = (count: number, methods: string[] = ['get']) =>
  JSON.stringify(
    openapi(
      {},
      Object.fromEntries(
        Array.from({ length: count }, (_, i) => [
          `/p${i}`,
          Object.fromEntries(methods.map((m) => [m, operation])),
        ]),
      ),
    ),
  );
/** A YAML document whose `info.description` is a `bytes`-long anchored string, aliased `aliases` times. */
const aliasedYaml = (bytes: number, aliases: number) =>
  [
    'openapi: 3.0.3',
    'info:',
    '  title: T',
    '  version: "1"',
    `  description: &big ${'a'.repeat(bytes)}`,
    'paths: {}',
    'x-copies:',
    ...Array.from({ length: aliases }, () => '  - *big'),
    '',
  ].join('\n');
/** Nested anchors, ten aliases a level: what yaml's own alias control stops. */
const laughs = [
  'openapi: 3.0.3',
  'info: {title: T, version: "1"}',
  'paths: {}',
  'x-a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]',
  'x-b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
  'x-c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
  'x-d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
  'x-e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]',
  '',
].join('\n');
const nested = (levels: number): unknown => (levels <= 1 ? {} : { x: nested(levels - 1) });
const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
const advice = (setting: string) =>
  ` Nothing was stored. Make the document smaller, or ask the platform's operator to raise ${setting}.`;

async function platformWithApi(dialect: 'sqlite' | 'postgres', env: Record<string, string>) {
  const api = await startApiPlatform(dialect, env);
  const { p, owner, team } = api;
  await createProject(p.ctx, owner, {
    teamId: team.id,
    slug: 'shop',
    name: 'Shop',
    originUrl: 'http://127.0.0.1:9',
  });
  const call = api.asOwner;
  // The documents differ in shape from one test to the next: the deploy gate (tested in
  // deploy-changes.test.ts) is told to let their changes through.
  const deploy = (document: string) =>
    call('POST', '/api/v1/projects/shop/deploys', { document, allowBreaking: true });
  const deploys = async () =>
    (await call('GET', '/api/v1/projects/shop/deploys')).body as unknown as { id: number; active: boolean }[];
  const storedRows = async () =>
    Number(
      (
        await p.ctx.db
          .selectFrom('deploys')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return { ...api, call, deploy, deploys, storedRows };
}

type Api = Awaited<ReturnType<typeof platformWithApi>>;

/** Deploys `document` and expects the refusal, with nothing stored and the live deploy unchanged. */
async function expectRefused(api: Api, document: string, status: number, code: string, message: string) {
  const before = await api.deploys();
  const rows = await api.storedRows();
  const answer = await api.deploy(document);
  assert.deepEqual(answer.body, { code, message, status });
  assert.equal(answer.status, status);
  assert.deepEqual(await api.deploys(), before);
  assert.equal(await api.storedRows(), rows);
}

for (const dialect of testDialects()) {
  describe(`documents that expand are refused before anything is stored (${dialect})`, () => {
    let api: Api;
    before(async () => {
      api = await platformWithApi(dialect, {});
      assert.equal((await api.deploy(VALID)).status, 201);
    });
    after(async () => {
      await api?.close();
    });

    it("refuses the finding's 1 MB string aliased 98 times: 413 document_too_large, naming DEPLOY_MAX_EXPANDED_SIZE", async () => {
      const document = aliasedYaml(1_000_000, 98);
      const expanded = jsonBytes(parseYaml(document, { maxAliasCount: -1 }));
      assert.ok(expanded > 98_000_000);
      await expectRefused(
        api,
        document,
        413,
        'document_too_large',
        `The document is ${expanded} bytes as JSON once parsed (YAML aliases expanded); the limit is 33554432 bytes.${advice('DEPLOY_MAX_EXPANDED_SIZE')}`,
      );
    });

    it('refuses nested anchors (a billion laughs) with 422 document_too_complex, naming DEPLOY_MAX_YAML_ALIASES', async () => {
      await expectRefused(
        api,
        laughs,
        422,
        'document_too_complex',
        `The YAML document's 40 aliases repeat anchors that hold aliases themselves, which multiplies them past the limit of 100. Write the repeated parts out, or use $ref.${advice('DEPLOY_MAX_YAML_ALIASES')}`,
      );
    });

    it('takes 100 aliases of a 100 kB string (10 MB expanded) under the default limits', async () => {
      const answer = await api.deploy(aliasedYaml(100_000, 100));
      assert.equal(answer.status, 201);
      assert.equal(answer.body.status, 'succeeded');
    });
  });

  describe(`each limit is a setting, named when it refuses (${dialect})`, () => {
    let api: Api;
    before(async () => {
      api = await platformWithApi(dialect, {
        API_BODY_LIMIT: '64KiB',
        DEPLOY_BODY_LIMIT: '256KiB',
        DEPLOY_MAX_EXPANDED_SIZE: '64KiB',
        DEPLOY_MAX_YAML_ALIASES: '3',
        DEPLOY_MAX_DEPTH: '16',
        DEPLOY_MAX_PATHS: '5',
        DEPLOY_MAX_OPERATIONS: '8',
      });
      assert.equal((await api.deploy(VALID)).status, 201);
    });
    after(async () => {
      await api?.close();
    });

    it('the body of a deploy: 413 body_too_large naming DEPLOY_BODY_LIMIT', async () => {
      await expectRefused(
        api,
        'x'.repeat(300 * 1024),
        413,
        'body_too_large',
        "The body is larger than 262144 bytes (the limit set by DEPLOY_BODY_LIMIT). Send a smaller body, or ask the platform's operator to raise DEPLOY_BODY_LIMIT.",
      );
    });

    it('other requests keep API_BODY_LIMIT, below what a deploy may send', async () => {
      // 100 KiB: over API_BODY_LIMIT, under DEPLOY_BODY_LIMIT.
      const other = await api.call('POST', '/api/v1/projects', {
        slug: 'big',
        name: 'n'.repeat(100 * 1024),
        teamId: 1,
        originUrl: 'http://127.0.0.1:9',
      });
      assert.deepEqual(statusAndBody(other), {
        status: 413,
        body: {
          code: 'body_too_large',
          message:
            "The body is larger than 65536 bytes (the limit set by API_BODY_LIMIT). Send a smaller body, or ask the platform's operator to raise API_BODY_LIMIT.",
          status: 413,
        },
      });
      const deploy = await api.deploy(`${' '.repeat(100 * 1024)}${VALID}`);
      assert.deepEqual([deploy.status, deploy.body.status], [201, 'succeeded']);
    });

    it('the expanded size of a JSON document: 413 document_too_large with its size', async () => {
      const document = JSON.stringify(openapi({ 'x-padding': 'p'.repeat(70_000) }), null, 1);
      await expectRefused(
        api,
        document,
        413,
        'document_too_large',
        `The document is ${jsonBytes(JSON.parse(document))} bytes as JSON once parsed (YAML aliases expanded); the limit is 65536 bytes.${advice('DEPLOY_MAX_EXPANDED_SIZE')}`,
      );
    });

    it('YAML aliases: 3 are taken, 4 are 422 document_too_complex', async () => {
      assert.equal((await api.deploy(aliasedYaml(10, 3))).body.status, 'succeeded');
      await expectRefused(
        api,
        aliasedYaml(10, 4),
        422,
        'document_too_complex',
        `The YAML document uses 4 aliases; the limit is 3. Write the repeated parts out, or use $ref.${advice('DEPLOY_MAX_YAML_ALIASES')}`,
      );
    });

    it('depth: 16 levels are taken; 17, or an alias inside its own anchor, are 422 document_too_complex', async () => {
      // The document is level 1, `x-deep` level 2.
      assert.equal(
        (await api.deploy(JSON.stringify(openapi({ 'x-deep': nested(15) })))).body.status,
        'succeeded',
      );
      const tooDeep = `The document nests more than 16 levels of objects and arrays; the limit is 16.${advice('DEPLOY_MAX_DEPTH')}`;
      await expectRefused(
        api,
        JSON.stringify(openapi({ 'x-deep': nested(16) })),
        422,
        'document_too_complex',
        tooDeep,
      );
      await expectRefused(
        api,
        'openapi: 3.0.3\ninfo: {title: T, version: "1"}\npaths: {}\nx-loop: &loop\n  self: *loop\n',
        422,
        'document_too_complex',
        tooDeep,
      );
    });

    it('paths: 5 are taken, 6 are 422 document_too_complex', async () => {
      assert.equal((await api.deploy(withPaths(5))).body.status, 'succeeded');
      await expectRefused(
        api,
        withPaths(6),
        422,
        'document_too_complex',
        `The document has 6 paths; the limit is 5.${advice('DEPLOY_MAX_PATHS')}`,
      );
    });

    it('operations (paths and webhooks): 8 are taken, 10 are 422 document_too_complex', async () => {
      assert.equal((await api.deploy(withPaths(4, ['get', 'put']))).body.status, 'succeeded');
      await expectRefused(
        api,
        withPaths(5, ['get', 'put']),
        422,
        'document_too_complex',
        `The document has 10 operations; the limit is 8.${advice('DEPLOY_MAX_OPERATIONS')}`,
      );
    });
  });

  describe(`old deploys are pruned (${dialect})`, () => {
    let api: Api;
    before(async () => {
      api = await platformWithApi(dialect, { DEPLOY_RETENTION: '3' });
    });
    after(async () => {
      await api?.close();
    });

    it('keeps the latest DEPLOY_RETENTION deploys and the live one, in the deploy that makes the rest old', async () => {
      const live = (await api.deploy(VALID)).body.id as number;
      const failed: number[] = [];
      // N + 1 failed deploys after the live one: the live one is no longer among the latest N.
      for (let i = 0; i < 4; i++) failed.push((await api.deploy('{"openapi": "3.0.3"}')).body.id as number);
      assert.deepEqual(
        (await api.deploys()).map((d) => [d.id, d.active]),
        [
          [failed[3], false],
          [failed[2], false],
          [failed[1], false],
          [live, true],
        ],
      );
      assert.equal(await api.storedRows(), 4);
      // A new live deploy: the old live one is only old now.
      const next = (await api.deploy(VALID)).body.id as number;
      assert.deepEqual(
        (await api.deploys()).map((d) => [d.id, d.active]),
        [
          [next, true],
          [failed[3], false],
          [failed[2], false],
        ],
      );
      assert.equal(await api.storedRows(), 3);
    });

    it('keeps a preview however many deploys come after it', async () => {
      const preview = await api.call('POST', '/api/v1/projects/shop/deploys', {
        document: VALID,
        preview: true,
      });
      assert.equal(preview.status, 201);
      const later: number[] = [];
      for (let i = 0; i < 4; i++) later.push((await api.deploy(VALID)).body.id as number);
      assert.deepEqual(
        (await api.deploys()).map((d) => d.id),
        [later[3], later[2], later[1], preview.body.id],
        'the latest 3 and the preview',
      );
    });
  });
}

describe('the limits are settings, validated at start', () => {
  it('reads sizes with units and names a bad value', () => {
    const config = loadPlatformConfig({ API_BODY_LIMIT: '16MiB', DEPLOY_MAX_EXPANDED_SIZE: '1GiB' });
    assert.equal(config.apiBodyLimitBytes, 16 * 1024 * 1024);
    assert.equal(config.deployMaxExpandedBytes, 1024 ** 3);
    assert.throws(
      () => loadPlatformConfig({ DEPLOY_MAX_PATHS: 'lots', API_BODY_LIMIT: '6 MB' }),
      new RegExp(
        [
          'API_BODY_LIMIT="6 MB" is not valid: expected a size in bytes',
          'DEPLOY_MAX_PATHS="lots" is not valid: expected a whole number from 1 to 10000000',
        ]
          .map((s) => s.replaceAll(/[()]/g, '\\$&'))
          .join('[\\s\\S]*'),
      ),
    );
  });

  it('defaults let real large descriptions through', () => {
    const config = loadPlatformConfig({});
    assert.deepEqual(
      [
        config.apiBodyLimitBytes,
        config.deployBodyLimitBytes,
        config.deployMaxExpandedBytes,
        config.deployMaxYamlAliases,
        config.deployMaxDepth,
        config.deployMaxPaths,
        config.deployMaxOperations,
        config.deployRetention,
      ],
      [6 * 1024 * 1024, 32 * 1024 * 1024, 32 * 1024 * 1024, 100, 128, 10_000, 20_000, 50],
    );
  });
});
