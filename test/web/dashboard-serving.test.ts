import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { buildPlatformApp } from '../../src/main/platform-app.ts';
import { createToken } from '../../src/platform/accounts/credentials.ts';
import { managementDocument } from '../../src/platform/api/app.ts';
import type { CertificateStatus } from '../../src/platform/certificates/certificate-job.ts';
import type { Actor } from '../../src/platform/context.ts';
import { DNS_CHECK_REASONS } from '../../src/platform/domains/dns-check.ts';
import {
  CERTIFICATE_FAILED_REMEDY,
  CERTIFICATE_REFUSED_REMEDY,
  DOMAIN_STATUS_LABELS,
  DOMAIN_STATUS_TABLE,
  domainFailure,
  domainStatus,
} from '../../src/platform/domains/domain-status.ts';
import { DASHBOARD_CSP, DASHBOARD_ROUTES, loadDashboard } from '../../src/web/dashboard/index.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import { seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const files = loadDashboard();

for (const dialect of testDialects()) {
  describe(`the dashboard is served by the control plane (${dialect})`, () => {
    let p: TestPlatform;
    let app: FastifyInstance;
    let owner: Actor;

    before(async () => {
      p = await startPlatformContext(dialect);
      ({ owner } = await seedTeam(p.ctx));
      app = buildPlatformApp(p.ctx);
      await app.ready();
    });

    after(() => closeAll(app, p));

    it('answers every client-side route with the page: CSP allowing only self, revalidated on each load', async () => {
      const urls = [
        '/',
        '/sign-in',
        '/sign-up',
        '/invitations/accept',
        '/reset-password',
        '/forgot-password',
        '/account',
        '/teams',
        '/teams/new',
        '/teams/1/people',
        '/projects/petstore',
        '/projects/petstore/deploys',
        '/projects/petstore/traffic',
        '/projects/petstore/settings/domains',
        '/projects/petstore/settings/cors',
        '/projects/petstore/settings',
        '/new',
        '/teams/1/settings',
      ];
      for (const url of urls) {
        const reply = await app.inject({ method: 'GET', url });
        assert.equal(reply.statusCode, 200, url);
        assert.equal(reply.headers['content-type'], 'text/html; charset=utf-8');
        assert.equal(reply.headers['content-security-policy'], DASHBOARD_CSP);
        assert.equal(reply.headers['cache-control'], 'no-cache');
        assert.equal(reply.headers['x-content-type-options'], 'nosniff');
        assert.match(
          reply.body,
          new RegExp(`<script type="module" src="/assets/${files.version}/app\\.js"></script>`),
        );
      }
      assert.equal(DASHBOARD_ROUTES.length, urls.length, 'one URL above per client-side route');
      assert.match(DASHBOARD_CSP, /default-src 'self'/);
      assert.doesNotMatch(DASHBOARD_CSP, /unsafe|https?:/);
    });

    it('serves every asset the page names from this origin, cached for a year under a content hash', async () => {
      const page = (await app.inject({ method: 'GET', url: '/' })).body;
      const named = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
      assert.ok(named.length >= 6, named.join(' '));
      for (const url of named) {
        if (url === '/' || url === '#main') continue;
        assert.ok(url.startsWith(`/assets/${files.version}/`), `${url} is local and versioned`);
        const reply = await app.inject({ method: 'GET', url });
        assert.equal(reply.statusCode, 200, url);
        assert.equal(reply.headers['cache-control'], 'public, max-age=31536000, immutable');
        assert.match(String(reply.headers['content-type']), /^(text\/javascript|text\/css|image\/svg\+xml)/);
      }
      // Nothing reaches another origin: no absolute URL in any asset but the SVG namespace, the
      // examples shown in form fields, at example.com (reserved for examples, RFC 2606), and the
      // uPlot build's banner comment naming its home.
      for (const [name, asset] of files.assets) {
        const text = asset.body
          .toString('utf8')
          .replaceAll('http://www.w3.org/2000/svg', '')
          .replace(/^\/\*! https:\/\/github\.com\/leeoniya\/uPlot \(v[\d.]+\) \*\//, '')
          .replaceAll(/https:\/\/(?:[a-z]+\.)?example\.com\b/g, '');
        assert.doesNotMatch(text, /https?:\/\/|\/\/[a-z0-9-]+\.[a-z]/i, name);
      }
    });

    it('compresses, answers 304 to a matching ETag, and serves a stale version uncached', async () => {
      const url = `/assets/${files.version}/domains.js`;
      const zipped = await app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip, br' } });
      assert.equal(zipped.headers['content-encoding'], 'gzip');
      assert.equal(zipped.headers.vary, 'accept-encoding');
      const source = readFileSync(join(ROOT, 'src/web/dashboard/public/domains.js'));
      assert.deepEqual(gunzipSync(zipped.rawPayload), source);
      assert.ok(zipped.rawPayload.length < source.length / 2);
      const again = await app.inject({
        method: 'GET',
        url,
        headers: { 'if-none-match': String(zipped.headers.etag) },
      });
      assert.equal(again.statusCode, 304);
      assert.equal(again.body, '');
      const stale = await app.inject({ method: 'GET', url: '/assets/000000000000/domains.js' });
      assert.equal(stale.statusCode, 200);
      assert.equal(stale.headers['cache-control'], 'no-cache');
      const missing = await app.inject({ method: 'GET', url: `/assets/${files.version}/nope.js` });
      assert.equal(missing.statusCode, 404);
      const unknown = await app.inject({ method: 'GET', url: '/projects/petstore/nope' });
      assert.equal(unknown.statusCode, 404);
      assert.equal(unknown.json().code, 'route_not_found');
    });

    it("gives a reloaded page its session's CSRF token through GET /api/v1/me, and a token caller none", async () => {
      const signIn = await app.inject({
        method: 'POST',
        url: '/api/v1/session',
        payload: { email: 'owner@x.test', password: 'owner password 1' },
      });
      assert.equal(signIn.statusCode, 201);
      const cookie = String(signIn.headers['set-cookie']).split(';')[0] as string;
      const me = await app.inject({ method: 'GET', url: '/api/v1/me', headers: { cookie } });
      assert.deepEqual(me.json(), {
        email: 'owner@x.test',
        isAdmin: false,
        csrfToken: signIn.json().csrfToken,
      });
      const { token } = await createToken(p.ctx, owner, 'cli');
      const viaToken = await app.inject({
        method: 'GET',
        url: '/api/v1/me',
        headers: { authorization: `Bearer ${token}` },
      });
      assert.deepEqual(viaToken.json(), { email: 'owner@x.test', isAdmin: false });
    });
  });
}

describe('the status word of a domain', () => {
  const cert = (
    state: CertificateStatus['state'],
    notAfter: string | null = null,
    reason: string | null = null,
  ) => ({
    state,
    reason,
    notAfter,
    nextAttemptAt: null,
  });

  it('maps lifecycle state, last reason and certificate as the table says', () => {
    assert.equal(domainStatus('unverified', 'not_found_yet', null), 'unverified');
    assert.equal(domainStatus('unverified', null, null), 'unverified');
    assert.equal(domainStatus('unverified', 'dns_error', null), 'unverified');
    assert.equal(domainStatus('unverified', 'conflicting_record', null), 'failed');
    assert.equal(domainStatus('unverified', 'cname_mismatch', null), 'failed');
    assert.equal(domainStatus('unverified', 'hostname_taken', null), 'failed');
    assert.equal(domainStatus('unverified', 'checks_stopped', null), 'failed');
    assert.equal(domainStatus('verified', 'verified', null), 'verified');
    assert.equal(domainStatus('verified', 'verified', cert('none')), 'verified');
    assert.equal(domainStatus('verified', 'verified', cert('pending')), 'issuing');
    assert.equal(domainStatus('verified', 'verified', cert('ordering')), 'issuing');
    assert.equal(domainStatus('verified', 'verified', cert('failed', null, 'caa_forbids')), 'failed');
    assert.equal(domainStatus('verified', 'verified', cert('issued', '2027-01-01T00:00:00.000Z')), 'live');
    assert.equal(domainStatus('verified', 'verified', cert('ordering', '2027-01-01T00:00:00.000Z')), 'live');
    assert.equal(
      domainStatus('misconfigured', 'conflicting_record', cert('issued', '2027-01-01T00:00:00.000Z')),
      'failed',
    );
    assert.deepEqual(Object.keys(DOMAIN_STATUS_LABELS), [
      'unverified',
      'verified',
      'issuing',
      'live',
      'failed',
    ]);
    assert.deepEqual([...new Set(DOMAIN_STATUS_TABLE.map((r) => r.status))].sort(), [
      'failed',
      'issuing',
      'live',
      'unverified',
      'verified',
    ]);
  });

  it('carries the reason and the remedy of every failure', () => {
    assert.deepEqual(
      domainFailure(
        'failed',
        'conflicting_record',
        'an A record',
        DNS_CHECK_REASONS.conflicting_record.remedy,
        null,
      ),
      {
        reason: 'conflicting_record',
        message: 'an A record',
        remedy: DNS_CHECK_REASONS.conflicting_record.remedy,
      },
    );
    assert.equal(
      domainFailure('failed', 'verified', null, null, cert('failed', null, 'caa_forbids'))?.remedy,
      DNS_CHECK_REASONS.caa_forbids.remedy,
    );
    const retried = { ...cert('failed', null, 'CA busy'), nextAttemptAt: '2026-11-22T12:30:00.000Z' };
    assert.deepEqual(domainFailure('failed', 'verified', null, null, retried), {
      reason: 'certificate_failed',
      message: 'CA busy',
      remedy: CERTIFICATE_FAILED_REMEDY,
    });
    // A refusal is not retried by itself (no next attempt): the remedy says to fix it and Re-verify.
    assert.deepEqual(domainFailure('failed', 'verified', null, null, cert('failed', null, 'CA said no')), {
      reason: 'certificate_failed',
      message: 'CA said no',
      remedy: CERTIFICATE_REFUSED_REMEDY,
    });
    assert.equal(domainFailure('unverified', 'not_found_yet', 'nothing', 'wait', null), null);
  });

  it('is documented: the OpenAPI schema and the table in docs/decisions/dashboard.md name the same words', () => {
    const schemas = (
      managementDocument().components as {
        schemas: Record<string, { properties: Record<string, { enum?: string[] }> }>;
      }
    ).schemas;
    assert.deepEqual(schemas.Domain?.properties.status?.enum, Object.keys(DOMAIN_STATUS_LABELS));
    const decisions = readFileSync(join(ROOT, 'docs/decisions/dashboard.md'), 'utf8');
    const section = decisions.slice(decisions.indexOf('## Dashboard'));
    assert.ok(section.length > 100, 'docs/decisions/dashboard.md has a Dashboard section');
    for (const row of DOMAIN_STATUS_TABLE) {
      const cells = `| ${row.state} | ${row.reason} | ${row.certificate} | ${row.status} |`;
      assert.ok(section.includes(cells), `docs/decisions/dashboard.md lacks the row ${cells}`);
    }
  });
});
