import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { buildPlatformApp } from '../../src/main/platform-app.ts';
import { createToken } from '../../src/platform/accounts/credentials.ts';
import { RESET_REQUEST_ANSWER } from '../../src/platform/accounts/request-password-reset.ts';
import { createUser } from '../../src/platform/accounts/users.ts';
import { apiClient } from '../support/api-scenario.ts';
import { testDialects } from '../support/databases.ts';
import { seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';
import { type ReceivedMail, SmtpReceiver, textOfMail } from '../support/smtp.ts';

/**
 * Issue 28, "Forgot password?": with SMTP_URL a reset link is mailed to an account's own proved
 * email, the answer the same for any email; the link works once, for an hour, while the account
 * keeps that email; requests are limited per email and per address. Without SMTP_URL the API
 * says to ask a team owner or the operator. A real SMTP server on loopback; both databases.
 */
/** A call without credentials, from `remoteAddress`. */
const call = (
  app: FastifyInstance,
  method: string,
  url: string,
  body?: unknown,
  remoteAddress = '127.0.0.1',
) => apiClient(app, {}, { remoteAddress })(method, url, body);

/** A mail's text, quoted-printable soft breaks and escapes undone. */
const textOf = textOfMail;

/** Waits (up to 20 s) until the receiver holds `count` mails. */
async function mailsArrived(smtp: SmtpReceiver, count: number): Promise<ReceivedMail[]> {
  for (let i = 0; i < 400 && smtp.mails.length < count; i++) await sleep(50);
  assert.equal(smtp.mails.length, count, 'mails received');
  return smtp.mails;
}

const tokenIn = (mail: ReceivedMail) =>
  /^ {2}http:\/\/platform\.test\/reset-password#token=(krs_[\w-]{43})\r?$/m.exec(textOf(mail))?.[1];

const requested = { status: 202, body: { message: RESET_REQUEST_ANSWER } };

for (const dialect of testDialects()) {
  describe(`forgot password, mailed (${dialect})`, () => {
    let p: TestPlatform;
    let app: FastifyInstance;
    const smtp = new SmtpReceiver();

    before(async () => {
      const url = await smtp.start();
      p = await startPlatformContext(dialect, { SMTP_URL: url, SMTP_FROM: 'kennel@platform.test' });
      await seedTeam(p.ctx);
      await createUser(p.ctx, {
        email: 'unproved@x.test',
        password: 'unproved password',
        emailProved: false,
      });
      app = buildPlatformApp(p.ctx, { signIn: { resetRequests: { perEmail: 3, perAddress: 6 } } });
      await app.ready();
    });
    after(async () => {
      await app?.close();
      await p?.close();
      await smtp.stop();
    });

    it('says the sign-in page may offer the form', async () => {
      assert.deepEqual(
        await call(app, 'GET', '/api/v1/password-reset/policy').then((a) => [a.status, a.body]),
        [200, { byMail: true }],
      );
    });

    it('answers the same for an unknown and an unproved email and mails nothing to them; mails a proved account a link that works once', async () => {
      const ask = (email: string) =>
        call(app, 'POST', '/api/v1/password-reset/request', { email }, '10.0.0.1').then((a) => ({
          status: a.status,
          body: a.body,
        }));
      assert.deepEqual(await ask('nobody@x.test'), requested);
      assert.deepEqual(await ask('unproved@x.test'), requested);
      // No link row either: nothing could be mailed later.
      assert.deepEqual(await p.ctx.db.selectFrom('password_resets').select('id').execute(), []);
      assert.deepEqual(await ask(' Owner@X.test '), requested);
      const [mail] = await mailsArrived(smtp, 1);
      assert.ok(mail);
      assert.deepEqual([mail.from, mail.to], ['kennel@platform.test', ['owner@x.test']]);
      const text = textOf(mail);
      assert.match(text, /^Subject: Reset your Kennel password\r?$/m);
      assert.match(text, /works once, until 2026-11-22T13:00:00\.000Z/);
      const token = tokenIn(mail);
      assert.ok(token, text);

      const session = await call(app, 'POST', '/api/v1/session', {
        email: 'owner@x.test',
        password: 'owner password 1',
      });
      assert.equal(session.status, 201);
      const owner = await p.ctx.db
        .selectFrom('users')
        .select(['id', 'email'])
        .where('email', '=', 'owner@x.test')
        .executeTakeFirstOrThrow();
      await createToken(p.ctx, { userId: owner.id, email: owner.email, isAdmin: false }, 'before');

      const used = await call(app, 'POST', '/api/v1/password-reset', {
        token,
        password: 'a brand new password',
      });
      assert.deepEqual(
        [used.status, used.body],
        [200, { email: 'owner@x.test', sessionsEnded: 1, tokensRevoked: 1 }],
      );
      const signIn = (password: string) =>
        call(app, 'POST', '/api/v1/session', { email: 'owner@x.test', password }).then((a) => a.status);
      assert.equal(await signIn('a brand new password'), 201);
      assert.equal(await signIn('owner password 1'), 401);

      const again = await call(app, 'POST', '/api/v1/password-reset', {
        token,
        password: 'yet another password',
      });
      assert.deepEqual(again.body, {
        code: 'reset_link_not_valid',
        message:
          'This password reset link does not work: it was used or has expired. Ask for a new one: “Forgot password?” on the sign-in page, or a team owner.',
        status: 404,
      });
      assert.equal(await signIn('a brand new password'), 201);
      assert.equal(smtp.mails.length, 1, 'the unknown and unproved emails got nothing');
    });

    it('refuses a mailed link after its hour', async () => {
      smtp.mails.length = 0;
      const answer = await call(
        app,
        'POST',
        '/api/v1/password-reset/request',
        { email: 'admin@x.test' },
        '10.0.0.2',
      );
      assert.deepEqual([answer.status, answer.body], [requested.status, requested.body]);
      const [mail] = await mailsArrived(smtp, 1);
      const token = mail && tokenIn(mail);
      assert.ok(token);
      p.clock.advance(3_600_000);
      const late = await call(app, 'POST', '/api/v1/password-reset', {
        token,
        password: 'too late password',
      });
      assert.deepEqual([late.status, late.body.code], [404, 'reset_link_not_valid']);
      p.clock.advance(-3_600_000);
    });

    it('refuses a mailed link once the account uses another email', async () => {
      smtp.mails.length = 0;
      await createUser(p.ctx, { email: 'mover@x.test', password: 'mover password 1' });
      await call(app, 'POST', '/api/v1/password-reset/request', { email: 'mover@x.test' }, '10.0.0.3');
      const [mail] = await mailsArrived(smtp, 1);
      const token = mail && tokenIn(mail);
      assert.ok(token);
      await p.ctx.db
        .updateTable('users')
        .set({ email: 'moved@x.test' })
        .where('email', '=', 'mover@x.test')
        .execute();
      const refused = await call(app, 'POST', '/api/v1/password-reset', {
        token,
        password: 'taken over password',
      });
      assert.deepEqual([refused.status, refused.body.code], [403, 'reset_link_outdated']);
      assert.match(
        String(refused.body.message),
        /the account no longer uses the email the link was mailed to/,
      );
    });

    it('limits requests per email and per client address (429 too_many_reset_requests, Retry-After)', async () => {
      const ask = (email: string, address: string) =>
        call(app, 'POST', '/api/v1/password-reset/request', { email }, address);
      for (let i = 0; i < 3; i++) assert.equal((await ask('victim@x.test', `10.1.0.${i}`)).status, 202);
      const perEmail = await ask('victim@x.test', '10.1.0.9');
      assert.equal(perEmail.status, 429);
      assert.equal(perEmail.headers['retry-after'], '3600');
      assert.deepEqual(perEmail.body, {
        code: 'too_many_reset_requests',
        message:
          'Too many password reset requests for this email. Try again in 3600 s; a link already mailed keeps working for its hour.',
        status: 429,
      });
      for (let i = 0; i < 6; i++) assert.equal((await ask(`someone${i}@x.test`, '10.2.0.1')).status, 202);
      const perAddress = await ask('someone-else@x.test', '10.2.0.1');
      assert.deepEqual([perAddress.status, perAddress.body.code], [429, 'too_many_reset_requests']);
      assert.match(String(perAddress.body.message), /^Too many password reset requests from your address\./);
      p.clock.advance(3_600_000);
      assert.equal((await ask('victim@x.test', '10.2.0.1')).status, 202);
    });
  });

  describe(`forgot password, no mail configured (${dialect})`, () => {
    let p: TestPlatform;
    let app: FastifyInstance;

    before(async () => {
      p = await startPlatformContext(dialect);
      await seedTeam(p.ctx);
      app = buildPlatformApp(p.ctx);
      await app.ready();
    });
    after(async () => {
      await app?.close();
      await p?.close();
    });

    it('says to ask a team owner or the operator, for any email', async () => {
      assert.deepEqual((await call(app, 'GET', '/api/v1/password-reset/policy')).body, { byMail: false });
      for (const email of ['owner@x.test', 'nobody@x.test']) {
        const answer = await call(app, 'POST', '/api/v1/password-reset/request', { email });
        assert.deepEqual(answer.body, {
          code: 'mail_not_configured',
          message:
            'This Kennel sends no mail (its operator has not set SMTP_URL), so it cannot mail you a reset link. Ask an owner of your team for a password reset link, or the operator to run npm run reset-password -- <your email>.',
          status: 409,
        });
      }
      assert.deepEqual(await p.ctx.db.selectFrom('password_resets').select('id').execute(), []);
    });
  });
}
