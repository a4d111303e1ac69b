import assert from 'node:assert/strict';
import { scrypt, scryptSync } from 'node:crypto';
import { getPriority } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { parseSealingKey } from '../../src/lib/sealed-box.ts';
import { buildPlatformApp } from '../../src/main/platform-app.ts';
import {
  type DeriveKey,
  HasherBusyError,
  PasswordHasher,
  type ScryptParams,
} from '../../src/platform/accounts/password-hasher.ts';
import { addressKey, SignInLimiter, WindowCounter } from '../../src/platform/accounts/sign-in-limits.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import { managementDocument } from '../../src/platform/api/app.ts';
import { CertificateStore } from '../../src/platform/certificates/certificate-store.ts';
import { InternalIssuer } from '../../src/platform/certificates/internal-issuer.ts';
import { closeAll } from '../support/cleanup.ts';
import { ContractChecker } from '../support/contract.ts';
import { testDialects } from '../support/databases.ts';
import { startTestEdge, type TestEdge } from '../support/edge.ts';
import { requestAs, secureRequestAs } from '../support/http.ts';
import { startPlatformContext, type TestPlatform } from '../support/platform.ts';

const contract = new ContractChecker(managementDocument());
const OWNER = { email: 'owner@x.test', password: 'owner password 1' };
const SESSION = /^kennel_session=kss_[\w-]+; Path=\/; Expires=[^;]+ GMT; HttpOnly; SameSite=Strict$/;
const HOST_SESSION =
  /^__Host-kennel_session=kss_[\w-]+; Path=\/; Expires=[^;]+ GMT; HttpOnly; Secure; SameSite=Strict$/;
const scryptAsync = promisify(scrypt) as DeriveKey;

interface Answer {
  status: number;
  headers: Record<string, unknown>;
  body: Record<string, unknown>;
}

/** A sign-in through inject, from `address`, checked against the document. */
async function signIn(
  app: FastifyInstance,
  credentials: { email: string; password: string },
  address = '127.0.0.1',
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await app.inject({
    method: 'POST',
    url: '/api/v1/session',
    remoteAddress: address,
    headers: { 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(credentials),
  });
  contract.check(
    'POST',
    '/api/v1/session',
    response.statusCode,
    response.headers['content-type'] as string | undefined,
    response.body,
  );
  return { status: response.statusCode, headers: response.headers, body: JSON.parse(response.body) };
}

/** A sign-in refused as too many attempts (429), with `message` and `retry-after` seconds. */
function assertTooMany(refused: Answer, message: string, retryAfter: string) {
  assert.equal(refused.status, 429);
  assert.deepEqual(refused.body, { code: 'too_many_sign_in_attempts', status: 429, message });
  assert.equal(refused.headers['retry-after'], retryAfter);
}

describe('sign-in limits in memory', () => {
  it('keeps at most maxKeys windows, dropping expired ones first, then the oldest', () => {
    const counter = new WindowCounter(60_000, 100);
    for (let i = 0; i < 1000; i++) counter.add(`10.0.${i >> 8}.${i & 255}`, 0);
    assert.equal(counter.size, 100);
    // The newest are kept, the oldest forgotten.
    assert.equal(counter.count('10.0.3.231', 0), 1);
    assert.equal(counter.count('10.0.0.0', 0), 0);
    counter.add('kept', 59_000);
    // At 61 s the first 99 windows have expired: a new key drops them and keeps `kept`.
    counter.add('new', 61_000);
    assert.equal(counter.size, 2);
    assert.equal(counter.count('kept', 61_000), 1);
  });

  it('stays bounded while an attacker sprays addresses and emails', () => {
    const limiter = new SignInLimiter({ maxTracked: 500 });
    const now = new Date('2026-11-22T12:00:00Z');
    for (let i = 0; i < 20_000; i++) {
      const email = `user${i}@x.test`;
      limiter.attempt(email, `2001:db8:${(i % 65536).toString(16)}::1`, now);
    }
    assert.deepEqual(limiter.tracked, { pairs: 500, accounts: 500, known: 0, addresses: 500 });
  });

  it('counts IPv6 clients by their /64 and IPv4-mapped addresses as IPv4', () => {
    assert.equal(addressKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:db8::5'), '2001:db8:0:0::/64');
    assert.equal(addressKey('::1'), '0:0:0:0::/64');
    assert.equal(addressKey('::ffff:192.0.2.7'), '192.0.2.7');
    assert.equal(addressKey('192.0.2.7'), '192.0.2.7');
  });
});

describe('the password hasher', () => {
  const params: ScryptParams = { N: 2 ** 14, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
  const salt = Buffer.alloc(16, 7);

  it('derives what scrypt derives, at most `threads` at once, and refuses past its queue', async () => {
    const hasher = new PasswordHasher({ threads: 1, maxWaiting: 1, nice: 10 });
    try {
      const first = hasher.derive('one', salt, 32, params);
      const second = hasher.derive('two', salt, 32, params);
      assert.deepEqual(hasher.load, { running: 1, waiting: 1 });
      await assert.rejects(hasher.derive('three', salt, 32, params), HasherBusyError);
      assert.deepEqual(await first, scryptSync('one', salt, 32, params));
      assert.deepEqual(await second, scryptSync('two', salt, 32, params));
      assert.deepEqual(hasher.load, { running: 0, waiting: 0 });
    } finally {
      await hasher.close();
    }
  });

  it('hashes on a thread of lower priority than the event loop (Linux)', async (t) => {
    const { readdirSync, readFileSync } = await import('node:fs');
    let tasks: string[];
    try {
      tasks = readdirSync('/proc/self/task');
    } catch {
      t.skip('no /proc');
      return;
    }
    const nices = () =>
      readdirSync('/proc/self/task').map((tid) => {
        const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
        // Field 19 is nice; fields after the parenthesised name start at 3.
        return Number(
          stat
            .slice(stat.lastIndexOf(')') + 2)
            .split(' ')
            .at(16),
        );
      });
    assert.ok(tasks.length > 0);
    const hasher = new PasswordHasher({ threads: 1, nice: 7 });
    try {
      await hasher.derive('x', salt, 32, params);
      // The event loop's thread keeps the process's nice; only the hashing thread has 7.
      const loop = getPriority();
      assert.notEqual(loop, 7);
      assert.deepEqual(
        nices().filter((n) => n !== loop),
        [7],
      );
    } finally {
      await hasher.close();
    }
  });
});

for (const dialect of testDialects()) {
  describe(`signing in (${dialect})`, () => {
    let p: TestPlatform;
    let app: FastifyInstance;
    /** Every scrypt key derived, with its parameters: the work done per sign-in. */
    const derived: { saltLength: number; keyLength: number; params: ScryptParams }[] = [];
    const memo = new Map<string, Promise<Buffer>>();

    before(async () => {
      p = await startPlatformContext(dialect);
      await createUser(p.ctx, OWNER);
      await createUser(p.ctx, { email: 'other@x.test', password: 'other password 1' });
      app = buildPlatformApp(p.ctx, {
        signIn: {
          derive: (password, salt, keyLength, params) => {
            derived.push({ saltLength: salt.length, keyLength, params });
            // Real scrypt, remembered: the tests repeat the same checks many times.
            const key = `${password}\n${salt.toString('hex')}\n${keyLength}\n${JSON.stringify(params)}`;
            let result = memo.get(key);
            if (!result) {
              result = scryptAsync(password, salt, keyLength, params);
              memo.set(key, result);
            }
            return result;
          },
        },
      });
      await app.ready();
    });
    after(() => closeAll(app, p));

    it('sets kennel_session without Secure over plain HTTP, whatever X-Forwarded-Proto says', async () => {
      const plain = await signIn(app, OWNER, '192.0.2.1');
      assert.equal(plain.status, 201);
      assert.match(String(plain.headers['set-cookie']), SESSION);
      // Any client can send the header; the app trusts no proxy, so the socket decides.
      const claimed = await signIn(app, OWNER, '192.0.2.1', { 'x-forwarded-proto': 'https' });
      assert.match(String(claimed.headers['set-cookie']), SESSION);
      const value = String(plain.headers['set-cookie']).split(';')[0]?.split('=')[1] as string;
      const me = (cookie: string) =>
        app.inject({ method: 'GET', url: '/api/v1/me', headers: { cookie } }).then((r) => r.statusCode);
      assert.equal(await me(`kennel_session=${value}`), 200);
      // Over HTTP only the plain name is read.
      assert.equal(await me(`__Host-kennel_session=${value}`), 401);
    });

    it('checks an unknown email against a hash of the same cost as a known one', async () => {
      derived.length = 0;
      const known = await signIn(app, { email: 'owner@x.test', password: 'wrong password' }, '192.0.2.2');
      const unknown = await signIn(app, { email: 'nobody@x.test', password: 'wrong password' }, '192.0.2.2');
      assert.equal(known.status, 401);
      assert.deepEqual(unknown.body, known.body);
      assert.equal(derived.length, 2, 'one scrypt derivation per sign-in, unknown email included');
      const expected = {
        saltLength: 16,
        keyLength: 32,
        params: { N: 2 ** 17, r: 8, p: 1, maxmem: 256 * 1024 * 1024 },
      };
      assert.deepEqual(derived, [expected, expected]);
      // A success clears the failure just counted.
      assert.equal((await signIn(app, OWNER, '192.0.2.2')).status, 201);
    });

    it('refuses an address after 5 failures for an email in 15 minutes, while the owner signs in from another', async () => {
      const wrong = { email: 'Other@X.test', password: 'guess' };
      for (let i = 1; i <= 5; i++) {
        const answer = await signIn(app, wrong, '198.51.100.7');
        assert.equal(answer.status, 401, `failure ${i}`);
      }
      p.clock.advance(60_000);
      const other = { email: 'other@x.test', password: 'other password 1' };
      // The owner, from an address of their own (never seen before), is not locked out.
      assert.equal((await signIn(app, other, '203.0.113.9')).status, 201);
      // The right password from the guessing address: refused all the same, without a check.
      derived.length = 0;
      const refused = await signIn(app, other, '198.51.100.7');
      assertTooMany(
        refused,
        'Too many failed sign-ins for this email from your address. Try again in 840 s; sessions and API tokens already issued keep working.',
        String(14 * 60),
      );
      assert.equal(derived.length, 0);
      // Another account is not affected from the guessing address either.
      assert.equal((await signIn(app, OWNER, '198.51.100.7')).status, 201);
      p.clock.advance(14 * 60_000 - 1000);
      const almost = await signIn(app, other, '198.51.100.7');
      assert.equal(almost.headers['retry-after'], '1');
      p.clock.advance(1000);
      assert.equal((await signIn(app, other, '198.51.100.7')).status, 201);
    });

    it('counts guesses being checked, so 8 at once for one email from one address get 5 checks and 3 refusals', async () => {
      derived.length = 0;
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          signIn(app, { email: 'owner@x.test', password: `guess ${i}` }, '198.51.100.40'),
        ),
      );
      const statuses = answers.map((a) => a.status).sort();
      assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429, 429]);
      assert.equal(derived.length, 5);
      p.clock.advance(15 * 60_000);
    });

    it('clears the failures of an email from an address when it signs in from there', async () => {
      const wrong = { email: 'owner@x.test', password: 'guess' };
      for (let i = 0; i < 4; i++) assert.equal((await signIn(app, wrong, '198.51.100.20')).status, 401);
      assert.equal((await signIn(app, OWNER, '198.51.100.20')).status, 201);
      for (let i = 0; i < 5; i++) assert.equal((await signIn(app, wrong, '198.51.100.20')).status, 401);
      assert.equal((await signIn(app, wrong, '198.51.100.20')).status, 429);
      p.clock.advance(15 * 60_000);
    });

    it('answers 429 after 20 attempts a minute from one address (an IPv6 /64 counts as one)', async () => {
      p.clock.advance(60_000);
      for (let i = 0; i < 20; i++) {
        const answer = await signIn(
          app,
          { email: `guess${i}@x.test`, password: 'guess' },
          `2001:db8:7:7::${(i + 1).toString(16)}`,
        );
        assert.equal(answer.status, 401, `attempt ${i + 1}`);
      }
      p.clock.advance(15_000);
      const refused = await signIn(app, OWNER, '2001:db8:7:7:ffff::1');
      assert.equal(refused.status, 429);
      assert.equal(refused.body.code, 'too_many_sign_in_attempts');
      assert.equal(refused.headers['retry-after'], '45');
      // Another /64 is another client.
      assert.equal((await signIn(app, OWNER, '2001:db8:7:8::1')).status, 201);
      p.clock.advance(45_000);
      assert.equal((await signIn(app, OWNER, '2001:db8:7:7::1')).status, 201);
    });

    it('declares the 429 with Retry-After in the document', () => {
      const document = managementDocument() as {
        paths: Record<string, Record<string, { responses: Record<string, Record<string, unknown>> }>>;
      };
      const responses = document.paths['/api/v1/session']?.post?.responses ?? {};
      assert.deepEqual(responses['429']?.['x-error-codes'], ['too_many_sign_in_attempts']);
      assert.deepEqual(responses['429']?.headers, {
        'Retry-After': {
          description: 'Seconds to wait before trying again',
          schema: { type: 'integer', minimum: 1 },
        },
      });
      assert.deepEqual(responses['503']?.['x-error-codes'], ['sign_in_busy', 'database_unavailable']);
    });
  });

  describe(`the account's budget over all addresses (${dialect})`, () => {
    let p: TestPlatform;
    let app: FastifyInstance;

    before(async () => {
      p = await startPlatformContext(dialect);
      await createUser(p.ctx, OWNER);
      // A budget of 6 stands for the default 100: the same rule, fewer guesses to send.
      app = buildPlatformApp(p.ctx, { signIn: { limits: { accountBudget: 6 }, derive: scryptAsync } });
      await app.ready();
    });
    after(() => closeAll(app, p));

    it('stops a guess spread over many addresses, but lets the owner in from an address they signed in from before', async () => {
      assert.equal((await signIn(app, OWNER, '192.0.2.50')).status, 201, 'the owner, at home');
      p.clock.advance(3_600_000);
      const wrong = { email: OWNER.email, password: 'guess' };
      for (let i = 1; i <= 6; i++) {
        assert.equal((await signIn(app, wrong, `198.18.0.${i}`)).status, 401, `guess from address ${i}`);
      }
      p.clock.advance(60_000);
      // The budget is spent: a new address is refused, even with the right password.
      const refused = await signIn(app, OWNER, '198.18.0.7');
      assertTooMany(
        refused,
        'Too many failed sign-ins for this email from many addresses. Try again in 86340 s, or from an address this account signed in from before; sessions and API tokens already issued keep working.',
        '86340',
      );
      // The owner's known address still signs in, and the budget stays spent for the others.
      assert.equal((await signIn(app, OWNER, '192.0.2.50')).status, 201);
      assert.equal((await signIn(app, OWNER, '203.0.113.77')).status, 429);
      p.clock.advance(86_340_000);
      assert.equal((await signIn(app, OWNER, '203.0.113.77')).status, 201);
    });
  });

  describe(`timing of sign-ins for unknown and known emails (${dialect})`, () => {
    let p: TestPlatform;
    let app: FastifyInstance;

    before(async () => {
      p = await startPlatformContext(dialect);
      await createUser(p.ctx, OWNER);
      // The real hasher: its threads, its parameters.
      app = buildPlatformApp(p.ctx);
      await app.ready();
    });
    after(() => closeAll(app, p));

    it('takes about as long for an unknown email as for a known one (median of 5 each)', async () => {
      const median = (values: number[]) => values.sort((a, b) => a - b)[2] as number;
      const time = async (email: string, i: number) => {
        const started = performance.now();
        const answer = await signIn(app, { email, password: 'wrong password' }, `192.0.2.${100 + i}`);
        assert.equal(answer.status, 401);
        return performance.now() - started;
      };
      const known: number[] = [];
      const unknown: number[] = [];
      for (let i = 0; i < 5; i++) {
        known.push(await time('owner@x.test', i));
        unknown.push(await time(`nobody${i}@x.test`, i));
      }
      assert.ok(
        median(unknown) >= 0.5 * median(known),
        `unknown ${median(unknown).toFixed(0)} ms vs known ${median(known).toFixed(0)} ms`,
      );
    });
  });

  describe(`the session cookie over HTTPS through the edge (${dialect})`, () => {
    const KEY = parseSealingKey(`k1:${Buffer.alloc(32, 5).toString('base64')}`);
    let p: TestPlatform;
    let edge: TestEdge;

    const secure = (
      path: string,
      init: { method?: string; headers?: Record<string, string>; body?: string } = {},
    ) => secureRequestAs(edge.httpsPort, 'platform.test', path, init);
    const json = { 'content-type': 'application/json' };

    before(async () => {
      p = await startPlatformContext(dialect);
      p.clock.set(Date.now());
      await createUser(p.ctx, OWNER);
      const store = new CertificateStore(p.ctx.db, [KEY]);
      const issuer = new InternalIssuer(await store.internalCa(p.clock.now()));
      edge = await startTestEdge(p, { store, defaultCertificate: await issuer.issue('platform.test') });
    });
    after(() => closeAll(edge, p));

    it('sets __Host-kennel_session with Secure, reads only it over HTTPS, and clears it on sign-out', async () => {
      const signedIn = await secure('/api/v1/session', {
        method: 'POST',
        headers: json,
        body: JSON.stringify(OWNER),
      });
      assert.equal(signedIn.status, 201);
      const setCookie = signedIn.headers['set-cookie'] as string[];
      assert.equal(setCookie.length, 1);
      assert.match(setCookie[0] as string, HOST_SESSION);
      const cookie = (setCookie[0] as string).split(';')[0] as string;
      const value = cookie.slice(cookie.indexOf('=') + 1);
      const csrf = String((JSON.parse(signedIn.text) as { csrfToken: string }).csrfToken);

      assert.equal((await secure('/api/v1/me', { headers: { cookie } })).status, 200);
      // The plain name over HTTPS could have been set over HTTP by anyone on the path: not read.
      assert.equal(
        (await secure('/api/v1/me', { headers: { cookie: `kennel_session=${value}` } })).status,
        401,
      );
      // Over plain HTTP the __Host- cookie is not read either (browsers would not send it there).
      const plain = await requestAs(edge.httpPort, 'platform.test', '/api/v1/me', { headers: { cookie } });
      assert.equal(plain.status, 401);

      const out = await secure('/api/v1/session', {
        method: 'DELETE',
        headers: { cookie, 'x-csrf-token': csrf },
      });
      assert.equal(out.status, 204);
      assert.deepEqual(out.headers['set-cookie'], [
        '__Host-kennel_session=; Max-Age=0; Path=/; HttpOnly; Secure; SameSite=Strict',
      ]);
      assert.equal((await secure('/api/v1/me', { headers: { cookie } })).status, 401);
    });

    it("sets kennel_session without Secure over the edge's plain HTTP listener", async () => {
      const signedIn = await requestAs(edge.httpPort, 'platform.test', '/api/v1/session', {
        method: 'POST',
        headers: json,
        body: JSON.stringify(OWNER),
      });
      assert.equal(signedIn.status, 201);
      assert.match(String(signedIn.headers['set-cookie']), SESSION);
    });
  });
}
