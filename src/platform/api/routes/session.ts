import { parseCookie, stringifySetCookie } from 'cookie';
import { ref } from '../../../lib/http-api/index.ts';
import { createSession, endSession, sessionFor } from '../../accounts/credentials.ts';
import type { SignInGuard } from '../../accounts/sign-in.ts';
import { DEFAULT_SIGN_IN_LIMITS as LIMITS } from '../../accounts/sign-in-limits.ts';
import { type Caller, cameOverHttps, sessionCookieName } from '../auth.ts';
import { operations } from '../operation.ts';
import { jsonBody, noContent, ok } from './contract.ts';

/** The session routes; sign-ins go through `guard` (attempt limits, bounded hashing). */
export const sessionRoutes = (guard: SignInGuard) =>
  operations('Account', {
    signIn: {
      route: 'POST /api/v1/session',
      summary: 'Sign in',
      description: `Checks an email and password and starts a dashboard session: an HttpOnly, SameSite=Strict cookie (\`__Host-kennel_session\`, Secure, over HTTPS; \`kennel_session\` over plain HTTP), plus the CSRF token to send as X-CSRF-Token on changes. Limits (docs/security.md): ${LIMITS.accountFailures} failed sign-ins per email from one client address in ${LIMITS.accountWindowMs / 60_000} minutes; ${LIMITS.accountBudget} per email from all addresses in ${LIMITS.accountBudgetWindowMs / 3_600_000} hours, which an address the account signed in from in the last ${LIMITS.knownAddressMs / 86_400_000} days skips; ${LIMITS.addressAttempts} attempts per client address per ${LIMITS.addressWindowMs / 1000} s. Above any of them the answer is 429 \`too_many_sign_in_attempts\` with Retry-After. A successful sign-in clears the email's failures from that address.`,
      access: 'public',
      requestBody: jsonBody('Email and password', 'Credentials'),
      responses: {
        201: {
          description: 'Signed in',
          schema: ref('Session'),
          headers: {
            'Set-Cookie': {
              description:
                'The session: `__Host-kennel_session=kss_…; Path=/; Expires=…; HttpOnly; Secure; SameSite=Strict` over HTTPS, `kennel_session=kss_…; Path=/; Expires=…; HttpOnly; SameSite=Strict` over plain HTTP',
              schema: { type: 'string' },
            },
          },
        },
      },
      errors: ['invalid_credentials', 'too_many_sign_in_attempts', 'sign_in_busy'],
      async handler({ body }, reply, ctx) {
        const actor = await guard.signIn(ctx, body.email, body.password, reply.request.ip);
        const session = await createSession(ctx, actor);
        const https = cameOverHttps(reply.request);
        reply.code(201).header(
          'set-cookie',
          stringifySetCookie({
            name: sessionCookieName(https),
            value: session.cookie,
            httpOnly: true,
            sameSite: 'strict',
            secure: https,
            path: '/',
            expires: session.expiresAt,
          }),
        );
        return {
          email: actor.email,
          isAdmin: actor.isAdmin,
          csrfToken: session.csrfToken,
          expiresAt: session.expiresAt.toISOString(),
        };
      },
    },
    signOut: {
      route: 'DELETE /api/v1/session',
      summary: 'Sign out',
      description: 'Ends the dashboard session and clears its cookie.',
      responses: noContent('Signed out'),
      async handler({ caller }, reply, ctx) {
        const cookie = (caller as Caller).sessionCookie;
        if (cookie) await endSession(ctx, cookie);
        const https = cameOverHttps(reply.request);
        reply.header(
          'set-cookie',
          stringifySetCookie({
            name: sessionCookieName(https),
            value: '',
            httpOnly: true,
            sameSite: 'strict',
            secure: https,
            path: '/',
            maxAge: 0,
          }),
        );
        return reply.code(204).send();
      },
    },
    getSession: {
      route: 'GET /api/v1/session',
      summary: 'Is this browser signed in',
      description:
        'Whether the request carries a live dashboard session cookie: 200 either way, `{"signedIn": false}` without one, else the account and the session\'s CSRF token. The dashboard asks this on load, so a signed-out visitor\'s page makes no failing request. Only the cookie counts (an API token caller reads GET /api/v1/me).',
      access: 'public',
      responses: ok('Signed in or not', 'SessionState'),
      // Like every path, a bad percent-escape in the URL is 400 (this operation has no other 4xx).
      errors: ['malformed_url'],
      async handler(_input, reply, ctx) {
        const request = reply.request;
        const name = sessionCookieName(cameOverHttps(request));
        const cookie = request.headers.cookie ? parseCookie(request.headers.cookie)[name] : undefined;
        const session = cookie ? await sessionFor(ctx, cookie) : undefined;
        if (!session) return { signedIn: false };
        return {
          signedIn: true,
          email: session.actor.email,
          isAdmin: session.actor.isAdmin,
          csrfToken: session.csrfToken,
        };
      },
    },
    getMe: {
      route: 'GET /api/v1/me',
      summary: 'Who am I',
      description:
        "The signed-in account; with the dashboard's session cookie, also the session's CSRF token (a reloaded page cannot read the HttpOnly cookie, and only a same-origin page can read this answer).",
      responses: ok('The account', 'Me'),
      handler: async ({ caller }) => {
        const { actor, csrfToken } = caller as Caller;
        return { email: actor.email, isAdmin: actor.isAdmin, ...(csrfToken !== undefined && { csrfToken }) };
      },
    },
  });
