import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTeam, setPlan } from '../../src/platform/accounts/teams.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import type { Actor } from '../../src/platform/context.ts';
import { addDomain } from '../../src/platform/domains/add-domain.ts';
import { checkDueDomains } from '../../src/platform/domains/check-due-domains.ts';
import { inspectDomain, listDomains } from '../../src/platform/domains/read-domains.ts';
import { removeDomain } from '../../src/platform/domains/remove-domain.ts';
import { reverifyDomain, verifyDomain } from '../../src/platform/domains/verify-domain.ts';
import { deployProject } from '../../src/platform/projects/deploys.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import type { TestDns } from '../support/dns.ts';
import { seedProject, startPlatformContext, type TestPlatform } from '../support/platform.ts';
import { addOwnershipTxt, dnsEnv, startZones } from '../support/platform-dns.ts';

const DOC = JSON.stringify({ openapi: '3.0.3', info: { title: 'T', version: '1' }, paths: {} });

async function rejects(
  promise: Promise<unknown>,
  code: string,
  status: number,
  message?: RegExp,
): Promise<void> {
  await assert.rejects(promise, (error: { code?: string; status?: number; message: string }) => {
    assert.equal(error.code, code, error.message);
    assert.equal(error.status, status);
    if (message) assert.match(error.message, message);
    return true;
  });
}

for (const dialect of testDialects()) {
  describe(`custom domains against real DNS (${dialect})`, () => {
    let dns: TestDns;
    let p: TestPlatform;
    let admin: Actor;
    let owner: Actor;
    let teamId: number;
    before(async () => {
      dns = await startZones({
        'example.test': [],
        'platform.test': ['petstore', 'rival'].map((name) => ({ name, type: 'A', value: '127.0.0.1' })),
        'other.test': [],
        'xn--bcher-kva.test': [],
      });
      p = await startPlatformContext(dialect, {
        ...dnsEnv(dns),
        PLATFORM_IPV4: '127.0.0.1',
        CAA_IDENTIFIER: 'letsencrypt.org',
      });
      admin = await createUser(p.ctx, { email: 'admin@x.test', password: 'admin password 1', isAdmin: true });
      owner = await createUser(p.ctx, { email: 'owner@x.test', password: 'owner password 1' });
      const team = await createTeam(p.ctx, owner, 'Shop');
      teamId = team.id;
      await createProject(p.ctx, owner, {
        teamId,
        slug: 'petstore',
        name: 'Petstore',
        originUrl: 'http://127.0.0.1:4010',
      });
    });
    after(() => closeAll(p, dns));

    it('refuses custom domains on the Free plan, then without a deploy', async () => {
      await rejects(
        addDomain(p.ctx, owner, 'petstore', 'shop.example.test'),
        'plan_required',
        403,
        new RegExp(`Pro plan or above; .* Ask a platform admin to move team ${teamId} to the Pro plan\\.$`),
      );
      // A platform admin is told how to change the plan, not to ask a platform admin.
      await assert.rejects(addDomain(p.ctx, admin, 'petstore', 'shop.example.test'), (error: Error) => {
        assert.doesNotMatch(error.message, /ask a platform admin/i);
        assert.match(error.message, new RegExp(`you can move team ${teamId} to the Pro plan yourself\\.$`));
        return true;
      });
      await setPlan(p.ctx, admin, teamId, 'pro');
      await rejects(
        addDomain(p.ctx, owner, 'petstore', 'shop.example.test'),
        'deploy_required',
        409,
        /no successful deploy/,
      );
      await deployProject(p.ctx, owner, 'petstore', { document: DOC });
    });

    it('refuses hostnames that cannot be custom domains, with the reason', async () => {
      await rejects(addDomain(p.ctx, owner, 'petstore', '203.0.113.7'), 'hostname_ip_address', 422);
      await rejects(addDomain(p.ctx, owner, 'petstore', '*.example.test'), 'hostname_wildcard', 422);
      await rejects(addDomain(p.ctx, owner, 'petstore', 'platform.test'), 'hostname_platform_domain', 422);
      await rejects(
        addDomain(p.ctx, owner, 'petstore', 'x.petstore.platform.test'),
        'hostname_platform_domain',
        422,
      );
      await rejects(addDomain(p.ctx, owner, 'petstore', 'bad_name!.example.test'), 'invalid_hostname', 422);
    });

    it('verifies a subdomain whose CNAME is the shown value', async () => {
      const added = await addDomain(p.ctx, owner, 'petstore', 'Shop.Example.Test.');
      assert.equal(added.domain.hostname, 'shop.example.test');
      assert.equal(added.domain.state, 'unverified');
      assert.deepEqual(added.domain.records, [
        { type: 'CNAME', name: 'shop', value: 'petstore.platform.test', ttl: 3600, role: 'required' },
      ]);
      assert.equal(added.dns.check.reason, 'not_found_yet');
      await rejects(addDomain(p.ctx, owner, 'petstore', 'shop.example.test'), 'domain_already_added', 409);

      await dns.setRecords('example.test', [
        { name: 'shop', type: 'CNAME', value: 'petstore.platform.test' },
      ]);
      const result = await verifyDomain(p.ctx, owner, 'petstore', 'shop.example.test');
      assert.equal(result.outcome.reason, 'verified');
      assert.equal(result.domain.state, 'verified');
      assert.equal(result.domain.verifiedAt, p.clock.now().toISOString());
      assert.equal(result.domain.reason, null);
    });

    it('keeps a CNAME to a wrong value unverified, with the remedy', async () => {
      await addDomain(p.ctx, owner, 'petstore', 'wrong.example.test');
      await dns.addRecord('example.test', { name: 'wrong', type: 'CNAME', value: 'elsewhere.other.test' });
      const result = await verifyDomain(p.ctx, owner, 'petstore', 'wrong.example.test');
      assert.equal(result.domain.state, 'unverified');
      assert.equal(result.domain.reason, 'cname_mismatch');
      assert.match(
        result.domain.remedy ?? '',
        /Change the CNAME value to exactly the one listed for this domain/,
      );
    });

    it('reports an A record blocking the CNAME as a conflicting record, already when adding', async () => {
      await dns.addRecord('example.test', { name: 'blocked', type: 'A', value: '203.0.113.9' });
      const added = await addDomain(p.ctx, owner, 'petstore', 'blocked.example.test');
      assert.equal(added.dns.check.reason, 'conflicting_record');
      const result = await verifyDomain(p.ctx, owner, 'petstore', 'blocked.example.test');
      assert.equal(result.domain.reason, 'conflicting_record');
      assert.match(result.domain.message ?? '', /203\.0\.113\.9/);
      assert.match(result.domain.remedy ?? '', /Remove the conflicting A\/AAAA record/);
    });

    it('re-checks an absent record in the background with back-off and verifies it once added', async () => {
      const added = await addDomain(p.ctx, owner, 'petstore', 'later.example.test');
      assert.equal(added.domain.nextCheckAt, p.clock.now().toISOString());
      await checkDueDomains(p.ctx);
      let view = (await inspectDomain(p.ctx, owner, 'petstore', 'later.example.test')).domain;
      assert.equal(view.reason, 'not_found_yet');
      assert.equal(view.nextCheckAt, new Date(p.clock.now().getTime() + 60_000).toISOString());
      // On a plan without custom domains the checker skips the claim: no next check is shown.
      await setPlan(p.ctx, admin, teamId, 'free');
      const skipped = (await inspectDomain(p.ctx, owner, 'petstore', 'later.example.test')).domain;
      await setPlan(p.ctx, admin, teamId, 'pro');
      assert.equal(skipped.nextCheckAt, null);
      assert.equal(
        (await inspectDomain(p.ctx, owner, 'petstore', 'later.example.test')).domain.nextCheckAt,
        view.nextCheckAt,
      );
      await dns.addRecord('example.test', { name: 'later', type: 'CNAME', value: 'petstore.platform.test' });
      p.clock.advance(30_000);
      await checkDueDomains(p.ctx);
      assert.equal(
        (await inspectDomain(p.ctx, owner, 'petstore', 'later.example.test')).domain.state,
        'unverified',
      );
      p.clock.advance(30_000);
      await checkDueDomains(p.ctx);
      const inspected = await inspectDomain(p.ctx, owner, 'petstore', 'later.example.test');
      view = inspected.domain;
      assert.equal(view.state, 'verified');
      assert.deepEqual(
        inspected.history.map((e) => [e.actor, e.action, e.outcome]),
        [
          ['user:owner@x.test', 'add', 'unverified'],
          ['system', 'background', 'unverified'],
          ['system', 'background', 'verified'],
        ],
      );
    });

    it('stops background checks when the propagation window closes', async () => {
      await addDomain(p.ctx, owner, 'petstore', 'never.example.test');
      for (let i = 0; i < 80; i++) {
        await checkDueDomains(p.ctx);
        p.clock.advance(3_600_000);
      }
      const inspected = await inspectDomain(p.ctx, owner, 'petstore', 'never.example.test');
      assert.equal(inspected.domain.nextCheckAt, null);
      assert.equal(inspected.history.at(-1)?.action, 'checks_stopped');
      const checks = inspected.history.filter((e) => e.action === 'background').length;
      assert.ok(checks >= 48 && checks <= 56, `${checks} background checks in 48 h`);
    });

    it('verifies an apex through flattened addresses plus the TXT token, and not without the token', async () => {
      const added = await addDomain(p.ctx, owner, 'petstore', 'example.test');
      assert.equal(added.domain.kind, 'apex');
      const txt = added.domain.records.find((r) => r.type === 'TXT');
      assert.deepEqual(
        added.domain.records.map((r) => [r.type, r.name, r.role]),
        [
          ['ALIAS', '@', 'required'],
          ['A', '@', 'alternative'],
          ['TXT', '_kennel-challenge', 'ownership'],
        ],
      );
      await dns.addRecord('example.test', { name: '@', type: 'A', value: '127.0.0.1' });
      const without = await verifyDomain(p.ctx, owner, 'petstore', 'example.test');
      assert.equal(without.domain.reason, 'ownership_token_missing');
      await addOwnershipTxt(dns, '_kennel-challenge', txt?.value);
      const withToken = await verifyDomain(p.ctx, owner, 'petstore', 'example.test');
      assert.equal(withToken.domain.state, 'verified');
    });

    it('reports CAA records that forbid the CA, climbing the tree, and passes those that permit it', async () => {
      await dns.addRecord('other.test', { name: '@', type: 'CAA', value: '0 issue "pki.goog"' });
      const forbidden = await addDomain(p.ctx, owner, 'petstore', 'api.other.test');
      assert.equal(forbidden.dns.caa.reason, 'caa_forbids');
      assert.equal(forbidden.dns.caa.found.name, 'other.test');
      await dns.setRecords('other.test', [
        { name: '@', type: 'CAA', value: '0 issue "pki.goog"' },
        { name: '@', type: 'CAA', value: '0 issue "letsencrypt.org"' },
      ]);
      const permitted = await addDomain(p.ctx, owner, 'petstore', 'www.other.test');
      assert.equal(permitted.dns.caa.reason, 'permitted');
    });

    it('accepts a hostname that mixes scripts, with a homograph warning', async () => {
      // "shоp" with a Cyrillic о.
      const added = await addDomain(p.ctx, owner, 'petstore', 'sh\u043ep.example.test');
      assert.equal(added.domain.hostname, 'xn--shp-ted.example.test');
      assert.deepEqual(
        added.warnings.map((w) => w.code),
        ['mixed_scripts'],
      );
      await removeDomain(p.ctx, owner, 'petstore', added.domain.hostname);
    });

    it('handles an IDN hostname in its punycode form', async () => {
      const added = await addDomain(p.ctx, owner, 'petstore', 'Shop.Bücher.test');
      assert.equal(added.domain.hostname, 'shop.xn--bcher-kva.test');
      assert.equal(added.domain.unicode, 'shop.bücher.test');
      await dns.addRecord('xn--bcher-kva.test', {
        name: 'shop',
        type: 'CNAME',
        value: 'petstore.platform.test',
      });
      assert.equal(
        (await verifyDomain(p.ctx, owner, 'petstore', 'shop.bücher.test')).domain.state,
        'verified',
      );
    });

    it('lets another project take a verified hostname only with the ownership proof', async () => {
      const rivalOwner = await createUser(p.ctx, { email: 'rival@x.test', password: 'rival password 1' });
      const rivalTeam = await createTeam(p.ctx, rivalOwner, 'Rival');
      await setPlan(p.ctx, admin, rivalTeam.id, 'pro');
      await seedProject(p.ctx, rivalOwner, {
        teamId: rivalTeam.id,
        slug: 'rival',
        name: 'Rival',
        originUrl: 'http://127.0.0.1:1',
        document: DOC,
      });
      // shop.example.test is verified on petstore; rival claims it and points the CNAME at itself.
      const claim = await addDomain(p.ctx, rivalOwner, 'rival', 'shop.example.test');
      assert.deepEqual(
        claim.domain.records.map((r) => r.type),
        ['CNAME', 'TXT'],
      );
      await dns.removeRecord('example.test', { name: 'shop', type: 'CNAME' });
      await dns.addRecord('example.test', { name: 'shop', type: 'CNAME', value: 'rival.platform.test' });
      const noProof = await verifyDomain(p.ctx, rivalOwner, 'rival', 'shop.example.test');
      assert.equal(noProof.domain.state, 'unverified');
      assert.equal(noProof.domain.reason, 'hostname_taken');
      assert.equal(
        (await inspectDomain(p.ctx, owner, 'petstore', 'shop.example.test')).domain.state,
        'verified',
      );

      const txt = claim.domain.records.find((r) => r.type === 'TXT');
      await addOwnershipTxt(dns, '_kennel-challenge.shop', txt?.value);
      const proven = await verifyDomain(p.ctx, rivalOwner, 'rival', 'shop.example.test');
      assert.equal(proven.domain.state, 'verified');
      const old = await inspectDomain(p.ctx, owner, 'petstore', 'shop.example.test');
      assert.equal(old.domain.state, 'unverified');
      assert.equal(old.domain.reason, 'taken_over');
      assert.equal(old.history.at(-1)?.action, 'taken_over');
    });

    it('flags a verified domain that stops pointing here on the periodic re-check', async () => {
      await dns.removeRecord('example.test', { name: 'later', type: 'CNAME' });
      p.clock.advance(p.ctx.config.recheckIntervalMs);
      await checkDueDomains(p.ctx);
      const inspected = await inspectDomain(p.ctx, owner, 'petstore', 'later.example.test');
      const view = inspected.domain;
      assert.equal(view.state, 'misconfigured', JSON.stringify(inspected.history.slice(-4)));
      assert.equal(view.reason, 'not_found_yet');
    });

    it('offers Re-verify only after the waiting time without a certificate', async () => {
      await rejects(
        reverifyDomain(p.ctx, owner, 'petstore', 'wrong.example.test'),
        'reverify_not_available',
        409,
      );
      await dns.addRecord('example.test', { name: 'fresh', type: 'CNAME', value: 'petstore.platform.test' });
      await addDomain(p.ctx, owner, 'petstore', 'fresh.example.test');
      await verifyDomain(p.ctx, owner, 'petstore', 'fresh.example.test');
      await rejects(
        reverifyDomain(p.ctx, owner, 'petstore', 'fresh.example.test'),
        'reverify_not_available',
        409,
        /offered from/,
      );
      p.clock.advance(30 * 60_000);
      const result = await reverifyDomain(p.ctx, owner, 'petstore', 'fresh.example.test');
      assert.equal(result.domain.state, 'verified');
    });

    it('removes a domain: it stops counting, and its history records who did it', async () => {
      await removeDomain(p.ctx, owner, 'petstore', 'fresh.example.test');
      await rejects(inspectDomain(p.ctx, owner, 'petstore', 'fresh.example.test'), 'domain_not_found', 404);
      assert.ok(
        !(await listDomains(p.ctx, owner, 'petstore')).some((d) => d.hostname === 'fresh.example.test'),
      );
      const row = await p.ctx.db
        .selectFrom('domain_events')
        .innerJoin('domains', 'domains.id', 'domain_events.domain_id')
        .select(['domain_events.actor', 'domain_events.action', 'domain_events.outcome'])
        .where('domains.hostname', '=', 'fresh.example.test')
        .orderBy('domain_events.id', 'desc')
        .executeTakeFirstOrThrow();
      assert.deepEqual({ ...row }, { actor: 'user:owner@x.test', action: 'remove', outcome: 'removed' });
    });

    it('enforces the plan limit per project', async () => {
      const count = (await listDomains(p.ctx, owner, 'petstore')).length;
      for (let i = count; i < 10; i++) await addDomain(p.ctx, owner, 'petstore', `n${i}.example.test`);
      await rejects(
        addDomain(p.ctx, owner, 'petstore', 'one-too-many.example.test'),
        'domain_limit_reached',
        403,
        /Pro plan allows \(10\)/,
      );
    });
  });
}
