import { stringifySetCookie } from 'cookie';
import { defineOperation, ref } from '../../../lib/http-api/index.ts';
import { createSession, endSession } from '../../accounts/credentials.ts';
import { authenticate } from '../../accounts/users.ts';
import type { PlatformContext } from '../../context.ts';
import { type Caller, SESSION_COOKIE } from '../auth.ts';

const TAG = ['Account'];

export const sessionRoutes = [
  defineOperation<PlatformContext, unknown, unknown, { email: string; password: string }>({
    operationId: 'signIn',
    method: 'POST',
    path: '/api/v1/session',
    tags: TAG,
    summary: 'Sign in',
    description:
      'Checks an email and password and starts a dashboard session: an HttpOnly, SameSite=Strict cookie, plus the CSRF token to send as X-CSRF-Token on changes.',
    access: 'public',
    requestBody: { description: 'Email and password', schema: ref('Credentials') },
    responses: { 201: { description: 'Signed in', schema: ref('Session') } },
    errors: ['invalid_credentials'],
    async handler({ body, headers }, reply, ctx) {
      const actor = await authenticate(ctx, body.email, body.password);
      const session = await createSession(ctx, actor);
      const secure = headers['x-forwarded-proto'] === 'https';
      reply.code(201).header(
        'set-cookie',
        stringifySetCookie({
          name: SESSION_COOKIE,
          value: session.cookie,
          httpOnly: true,
          sameSite: 'strict',
          secure,
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
  }),
  defineOperation<PlatformContext>({
    operationId: 'signOut',
    method: 'DELETE',
    path: '/api/v1/session',
    tags: TAG,
    summary: 'Sign out',
    description: 'Ends the dashboard session and clears its cookie.',
    responses: { 204: { description: 'Signed out' } },
    errors: ['unauthenticated', 'csrf_failed'],
    async handler({ caller }, reply, ctx) {
      const cookie = (caller as Caller).sessionCookie;
      if (cookie) await endSession(ctx, cookie);
      reply.header(
        'set-cookie',
        stringifySetCookie({ name: SESSION_COOKIE, value: '', path: '/', maxAge: 0 }),
      );
      return reply.code(204).send();
    },
  }),
  defineOperation<PlatformContext>({
    operationId: 'getMe',
    method: 'GET',
    path: '/api/v1/me',
    tags: TAG,
    summary: 'Who am I',
    description:
      "The signed-in account; with the dashboard's session cookie, also the session's CSRF token (a reloaded page cannot read the HttpOnly cookie, and only a same-origin page can read this answer).",
    responses: { 200: { description: 'The account', schema: ref('Me') } },
    errors: ['unauthenticated'],
    handler: async ({ caller }) => {
      const { actor, csrfToken } = caller as Caller;
      return { email: actor.email, isAdmin: actor.isAdmin, ...(csrfToken !== undefined && { csrfToken }) };
    },
  }),
];
