import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { platformAllowsPlainHttp } from '../../src/edge/platform-https.ts';
import { parseSealingKey } from '../../src/lib/sealed-box.ts';
import { CertificateStore } from '../../src/platform/certificates/certificate-store.ts';
import { InternalIssuer } from '../../src/platform/certificates/internal-issuer.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import { startTestEdge, type TestEdge } from '../support/edge.ts';
import { type Reply, requestAs, secureRequestAs } from '../support/http.ts';
import { seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';

const KEY = parseSealingKey(`k1:${Buffer.alloc(32, 25).toString('base64')}`);
const DOMAIN = 'kennel.example.com';

/** One HTTPS request to the edge (the internal CA's certificate: trust is not what is tested). */
function overHttps(
  port: number,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Reply> {
  return secureRequestAs(port, DOMAIN, path, init);
}

describe('which platform domains may serve the dashboard over plain HTTP', () => {
  it('only localhost and the names reserved for testing (RFC 6761)', () => {
    assert.deepEqual(
      [
        'localhost',
        'kennel.localhost',
        'platform.test',
        'kennel.example',
        'kennel.invalid',
        'kennel.example.com',
        'example.com',
        'kennel.internal',
        'localhost.example.com',
        'test',
      ].map((name) => [name, platformAllowsPlainHttp(name)]),
      [
        ['localhost', true],
        ['kennel.localhost', true],
        ['platform.test', true],
        ['kennel.example', true],
        ['kennel.invalid', true],
        ['kennel.example.com', false],
        ['example.com', false],
        ['kennel.internal', false],
        ['localhost.example.com', false],
        ['test', true],
      ],
    );
  });
});

/**
 * Issue 25: a page of a project at `<slug>.<platform domain>` sets, from JavaScript,
 * `kennel_session=<the attacker's session>; domain=<platform domain>; path=/api/v1`. Browsers
 * then send both `kennel_session` cookies to the dashboard, the attacker's first (longer path);
 * over plain HTTP the dashboard took the first and answered as the attacker. With a real
 * platform domain the dashboard is HTTPS only, where only `__Host-kennel_session` counts.
 */
for (const dialect of testDialects()) {
  describe(`the platform site at a real domain is HTTPS only: a tossed session cookie is not read (${dialect})`, () => {
    let p: TestPlatform;
    let edge: TestEdge;
    const sessions = { attacker: '', victim: '' };

    before(async () => {
      p = await startPlatformContext(dialect, { PLATFORM_DOMAIN: DOMAIN });
      await seedTeam(p.ctx);
      const store = new CertificateStore(p.ctx.db, [KEY]);
      const internal = new InternalIssuer(await store.internalCa(p.clock.now()), {
        now: () => p.clock.now(),
      });
      edge = await startTestEdge(p, { store, defaultCertificate: await internal.issue(DOMAIN) });
      // The attacker (a project's owner) and the victim (the admin) each sign in, over HTTPS.
      for (const [who, email, password] of [
        ['attacker', 'owner@x.test', 'owner password 1'],
        ['victim', 'admin@x.test', 'admin password 1'],
      ] as const) {
        const signedIn = await overHttps(edge.httpsPort, '/api/v1/session', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email, password }),
        });
        assert.equal(signedIn.status, 201, signedIn.text);
        const cookie = String(signedIn.headers['set-cookie']);
        sessions[who] = /^__Host-kennel_session=([^;]+);/.exec(cookie)?.[1] ?? '';
        assert.ok(sessions[who], cookie);
      }
    });
    after(() => closeAll(edge, p));

    it('sends plain HTTP to HTTPS (308) before the dashboard reads any cookie', async () => {
      // Exactly what the victim's browser sends after the tenant page ran.
      const tossed = `kennel_session=${sessions.attacker}; kennel_session=${sessions.victim}`;
      const me = await requestAs(edge.httpPort, DOMAIN, '/api/v1/me', { headers: { cookie: tossed } });
      assert.equal(me.status, 308, me.text);
      assert.equal(me.headers.location, `https://${DOMAIN}:${edge.httpsPort}/api/v1/me`);
      assert.equal(me.text, '');
      assert.equal(me.headers['set-cookie'], undefined);
      // Signing in over plain HTTP is sent to HTTPS too (308 keeps the method): no HTTP session.
      const signIn = await requestAs(edge.httpPort, DOMAIN, '/api/v1/session', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'admin@x.test', password: 'admin password 1' }),
      });
      assert.deepEqual(
        [signIn.status, signIn.headers.location, signIn.headers['set-cookie']],
        [308, `https://${DOMAIN}:${edge.httpsPort}/api/v1/session`, undefined],
      );
    });

    it('over HTTPS answers as the victim, whatever kennel_session the tenant page planted', async () => {
      const me = await overHttps(edge.httpsPort, '/api/v1/me', {
        headers: {
          cookie: `kennel_session=${sessions.attacker}; __Host-kennel_session=${sessions.victim}`,
        },
      });
      assert.equal(me.status, 200, me.text);
      assert.equal((JSON.parse(me.text) as { email: string }).email, 'admin@x.test');
      const planted = await overHttps(edge.httpsPort, '/api/v1/me', {
        headers: { cookie: `kennel_session=${sessions.attacker}` },
      });
      assert.equal(planted.status, 401, planted.text);
    });
  });
}
