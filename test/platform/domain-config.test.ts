import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Actor } from '../../src/platform/context.ts';
import { applyDomainConfig, exportDomainConfig } from '../../src/platform/domains/apply-domain-config.ts';
import { type ConfigContext, parseDomainConfig } from '../../src/platform/domains/domain-config.ts';
import { listDomains } from '../../src/platform/domains/read-domains.ts';
import { testDialects } from '../support/databases.ts';
import { startPlatformContext, type TestPlatform } from '../support/platform.ts';
import {
  expectRefusedUnchanged,
  itRefusesEach,
  type RefusedConfig,
  seedTeamProject,
} from '../support/platform-config.ts';

const CONTEXT: ConfigContext = {
  existing: ['shop.example.test', 'www.example.test'],
  defaultHost: 'petstore.platform.test',
  platformDomain: 'platform.test',
};

describe('the YAML domain configuration', () => {
  it('reads the seed shape, with 301 as the default status', () => {
    const parsed = parseDomainConfig(
      `domains:
  primary: Shop.Example.Test
  redirects:
    - from: www.example.test
      to: shop.example.test
    - from: old.example.test
      to: shop.example.test
      status: 308
  names: [old.example.test]
`,
      CONTEXT,
    );
    assert.deepEqual(parsed, {
      ok: true,
      config: {
        names: ['old.example.test'],
        primary: 'shop.example.test',
        redirects: [
          { from: 'www.example.test', to: 'shop.example.test', status: 301 },
          { from: 'old.example.test', to: 'shop.example.test', status: 308 },
        ],
      },
    });
  });

  const invalid: RefusedConfig[] = [
    ['broken YAML', 'domains:\n  primary: [\n', 3, 1, /./],
    [
      'an invalid hostname',
      'domains:\n  primary: "shop..example.test"\n',
      2,
      12,
      /The primary "shop\.\.example\.test" is not a valid custom domain/,
    ],
    [
      'an unknown status',
      'domains:\n  redirects:\n    - from: www.example.test\n      to: shop.example.test\n      status: 305\n',
      5,
      15,
      /Unknown redirect status 305: allowed are 301, 302, 307, 308/,
    ],
    [
      'a redirect loop',
      'domains:\n  redirects:\n    - from: www.example.test\n      to: www.example.test\n',
      4,
      11,
      /redirects to itself: a redirect loop/,
    ],
    [
      'a two-step loop',
      'domains:\n  redirects:\n    - from: www.example.test\n      to: shop.example.test\n    - from: shop.example.test\n      to: www.example.test\n',
      4,
      11,
      /www\.example\.test → shop\.example\.test → www\.example\.test is a redirect loop/,
    ],
    [
      'a chain',
      'domains:\n  names: [old.example.test]\n  redirects:\n    - from: old.example.test\n      to: www.example.test\n    - from: www.example.test\n      to: shop.example.test\n',
      5,
      11,
      /www\.example\.test itself redirects, so old\.example\.test would chain through it/,
    ],
    [
      'a from that is not a domain of the project',
      'domains:\n  redirects:\n    - from: stranger.example.test\n      to: shop.example.test\n',
      3,
      13,
      /stranger\.example\.test is not a domain of this project/,
    ],
    [
      'a primary that is not a domain of the project',
      'domains:\n  primary: stranger.example.test\n',
      2,
      12,
      /stranger\.example\.test is not a domain of this project/,
    ],
    [
      'an unknown key',
      'domains:\n  primary: shop.example.test\n  redirect: []\n',
      3,
      3,
      /Unknown key "redirect" under domains/,
    ],
    [
      'the platform domain as a name',
      'domains:\n  names: [x.platform.test]\n',
      2,
      11,
      /not a valid custom domain/,
    ],
  ];
  itRefusesEach(invalid, CONTEXT);
});

for (const dialect of testDialects()) {
  describe(`apply and export (${dialect})`, () => {
    let p: TestPlatform;
    let owner: Actor;
    before(async () => {
      p = await startPlatformContext(dialect);
      ({ owner } = await seedTeamProject(p.ctx, {
        slug: 'petstore',
        name: 'Petstore',
        originUrl: 'http://127.0.0.1:4010',
        title: 'T',
      }));
    });
    after(() => p.close());

    it('adds missing domains, sets primary and redirects, and round-trips export → apply → export', async () => {
      const result = await applyDomainConfig(
        p.ctx,
        owner,
        'petstore',
        `domains:
  names: [shop.example.test, www.example.test, api.example.test]
  primary: shop.example.test
  redirects:
    - from: www.example.test
      to: shop.example.test
      status: 301
`,
      );
      assert.deepEqual(result.added, ['shop.example.test', 'www.example.test', 'api.example.test']);
      assert.deepEqual(
        (await listDomains(p.ctx, owner, 'petstore')).map((d) => [d.hostname, d.state]),
        [
          ['shop.example.test', 'unverified'],
          ['www.example.test', 'unverified'],
          ['api.example.test', 'unverified'],
        ],
      );
      const exported = await exportDomainConfig(p.ctx, owner, 'petstore');
      assert.equal(
        exported,
        `domains:
  primary: shop.example.test
  redirects:
    - from: www.example.test
      to: shop.example.test
      status: 301
  names:
    - api.example.test
    - shop.example.test
    - www.example.test
`,
      );
      const again = await applyDomainConfig(p.ctx, owner, 'petstore', exported);
      assert.deepEqual([again.added, again.removed], [[], []]);
      assert.equal(await exportDomainConfig(p.ctx, owner, 'petstore'), exported);
    });

    it('removes nothing unless asked, and prunes when asked', async () => {
      const kept = await applyDomainConfig(
        p.ctx,
        owner,
        'petstore',
        'domains:\n  names: [shop.example.test]\n',
      );
      assert.deepEqual(kept.removed, []);
      assert.equal((await listDomains(p.ctx, owner, 'petstore')).length, 3);
      const pruned = await applyDomainConfig(
        p.ctx,
        owner,
        'petstore',
        'domains:\n  names: [shop.example.test]\n  primary: shop.example.test\n',
        {
          prune: true,
        },
      );
      assert.deepEqual(pruned.removed, ['api.example.test', 'www.example.test']);
      assert.deepEqual(
        (await listDomains(p.ctx, owner, 'petstore')).map((d) => d.hostname),
        ['shop.example.test'],
      );
    });

    it('changes nothing when the file is invalid', async () => {
      await expectRefusedUnchanged(
        p.ctx,
        owner,
        'petstore',
        'domains:\n  names: [new.example.test]\n  redirects:\n    - from: new.example.test\n      to: new.example.test\n',
        (error) =>
          error.code === 'invalid_domain_config' &&
          error.status === 422 &&
          /line 5, column 11/.test(error.message),
      );
    });
  });
}
