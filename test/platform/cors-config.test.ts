import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_CORS_POLICY } from '../../src/lib/cors-policy.ts';
import type { Actor } from '../../src/platform/context.ts';
import { applyDomainConfig, exportDomainConfig } from '../../src/platform/domains/apply-domain-config.ts';
import { type ConfigContext, parseDomainConfig } from '../../src/platform/domains/domain-config.ts';
import { readProjectCors, setProjectCors } from '../../src/platform/projects/project-cors.ts';
import { testDialects } from '../support/databases.ts';
import { seedPetstoreProject, startPlatformContext, type TestPlatform } from '../support/platform.ts';
import { expectRefusedUnchanged, itRefusesEach, type RefusedConfig } from '../support/platform-config.ts';

/**
 * The `cors:` section of the project's YAML configuration (the file of `kennel domains
 * export/apply`): parsed with line and column for each problem, applied in the same transaction as
 * the domains, exported back, and left alone by a file without it.
 */

const CONTEXT: ConfigContext = {
  existing: ['shop.example.test'],
  defaultHost: 'petstore.platform.test',
  platformDomain: 'platform.test',
};

const WITH_CORS = `domains:
  names: []
cors:
  allowedOrigins: [https://app.example.com]
  allowedHeaders: [Authorization, Content-Type, If-Match]
  exposeHeaders: [ETag]
`;

describe('the cors section of the YAML configuration', () => {
  it('reads it: fields left out take their defaults, enabled is true', () => {
    const parsed = parseDomainConfig(WITH_CORS, CONTEXT);
    assert.ok(parsed.ok, JSON.stringify(parsed));
    assert.deepEqual(parsed.config.cors, {
      ...DEFAULT_CORS_POLICY,
      enabled: true,
      allowedOrigins: ['https://app.example.com'],
      allowedHeaders: ['authorization', 'content-type', 'if-match'],
      exposeHeaders: ['etag'],
    });
  });

  it('a file without it has no cors (the policy is left as it is)', () => {
    const parsed = parseDomainConfig('domains:\n  names: []\n', CONTEXT);
    assert.ok(parsed.ok);
    assert.equal(parsed.config.cors, undefined);
  });

  const invalid: RefusedConfig[] = [
    [
      '* with credentials',
      'domains: {}\ncors:\n  allowedOrigins: ["*"]\n  allowCredentials: true\n',
      3,
      19,
      /cannot be used with credentials/,
    ],
    [
      'an origin with a path',
      'domains: {}\ncors:\n  allowedOrigins:\n    - https://app.example.com/x\n',
      4,
      5,
      /write https:\/\/app\.example\.com\./,
    ],
    ['an unknown key', 'domains: {}\ncors:\n  origins: []\n', 3, 3, /Unknown key "origins" under cors/],
    [
      'a list that is a string',
      'domains: {}\ncors:\n  allowedMethods: GET\n',
      3,
      19,
      /must be a list of strings/,
    ],
    [
      'credentials that are not a boolean',
      'domains: {}\ncors:\n  allowCredentials: yes\n',
      3,
      21,
      /true or false/,
    ],
    ['a section that is not a mapping', 'domains: {}\ncors: on\n', 2, 7, /cors must be a mapping/],
  ];
  itRefusesEach(invalid, CONTEXT);
});

for (const dialect of testDialects()) {
  describe(`cors in apply and export (${dialect})`, () => {
    let p: TestPlatform;
    let owner: Actor;
    before(async () => {
      p = await startPlatformContext(dialect);
      owner = (await seedPetstoreProject(p.ctx, 'http://127.0.0.1:4010')).owner;
    });
    after(() => p.close());

    it('exports no cors section until a policy is set', async () => {
      assert.equal(
        await exportDomainConfig(p.ctx, owner, 'petstore'),
        'domains:\n  primary: null\n  redirects: []\n  names: []\n',
      );
    });

    it('applies the section, exports it whole, and round-trips', async () => {
      await applyDomainConfig(p.ctx, owner, 'petstore', WITH_CORS);
      assert.deepEqual(await readProjectCors(p.ctx, owner, 'petstore'), {
        ...DEFAULT_CORS_POLICY,
        enabled: true,
        allowedOrigins: ['https://app.example.com'],
        allowedHeaders: ['authorization', 'content-type', 'if-match'],
        exposeHeaders: ['etag'],
      });
      const exported = await exportDomainConfig(p.ctx, owner, 'petstore');
      assert.equal(
        exported,
        `domains:
  primary: null
  redirects: []
  names: []
cors:
  enabled: true
  allowedOrigins:
    - https://app.example.com
  allowedMethods:
    - GET
    - HEAD
    - POST
    - PUT
    - PATCH
    - DELETE
  allowedHeaders:
    - authorization
    - content-type
    - if-match
  exposeHeaders:
    - etag
  allowCredentials: false
  maxAgeSeconds: 600
`,
      );
      await applyDomainConfig(p.ctx, owner, 'petstore', exported);
      assert.equal(await exportDomainConfig(p.ctx, owner, 'petstore'), exported);
    });

    it('a file without the section leaves the policy as it is', async () => {
      await setProjectCors(p.ctx, owner, 'petstore', {
        ...DEFAULT_CORS_POLICY,
        enabled: true,
        allowedOrigins: ['http://localhost:5173'],
      });
      await applyDomainConfig(p.ctx, owner, 'petstore', 'domains:\n  names: []\n');
      assert.deepEqual((await readProjectCors(p.ctx, owner, 'petstore')).allowedOrigins, [
        'http://localhost:5173',
      ]);
    });

    it('an invalid section changes nothing, domains included', async () => {
      await expectRefusedUnchanged(
        p.ctx,
        owner,
        'petstore',
        'domains:\n  names: [new.example.test]\ncors:\n  allowedOrigins: ["*"]\n  allowCredentials: true\n',
        (error) =>
          error.code === 'invalid_domain_config' &&
          /line 4, column 19 \(cors\.allowedOrigins\)/.test(error.message),
      );
    });
  });
}
