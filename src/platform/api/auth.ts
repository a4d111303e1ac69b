import { parseCookie } from 'cookie';
import type { FastifyRequest } from 'fastify';
import type { AnyOperation } from '../../lib/http-api/index.ts';
import { sessionFor, type TokenScope, tokenHolder } from '../accounts/credentials.ts';
import type { Actor, PlatformContext } from '../context.ts';
import { platformErrors } from '../errors.ts';

/**
 * The dashboard session cookie. Over HTTPS it is `__Host-kennel_session` (Secure, Path=/, no
 * Domain: browsers then refuse it from any other origin, subdomains and plain HTTP included).
 * Browsers refuse a `__Host-` cookie without Secure, so over plain HTTP (local use) it is
 * `kennel_session` without Secure. Each scheme reads only its own name (docs/decisions/accounts-and-sign-in.md).
 */
export const SESSION_COOKIE = '__Host-kennel_session';
export const PLAIN_HTTP_SESSION_COOKIE = 'kennel_session';

/**
 * Whether the request came over TLS, from the socket: the edge hands the management app the
 * client's own connection. X-Forwarded-Proto is not read, since the app trusts no proxy.
 */
export function cameOverHttps(request: FastifyRequest): boolean {
  return (request.raw.socket as { encrypted?: boolean } | null)?.encrypted === true;
}

export function sessionCookieName(https: boolean): string {
  return https ? SESSION_COOKIE : PLAIN_HTTP_SESSION_COOKIE;
}
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** What a read-scoped API token may send. */
const READ_METHODS = new Set(['GET', 'HEAD']);

/** Who may call an operation: anyone, any signed-in account, or platform admins. */
export type Access = 'public' | 'user' | 'admin';

export interface Caller {
  readonly actor: Actor;
  /** The session cookie, when the caller signed in through the dashboard. */
  readonly sessionCookie?: string;
  /** That session's CSRF token. */
  readonly csrfToken?: string;
  /** The API token's scope, when the caller sent one. */
  readonly scope?: TokenScope;
}

/**
 * Resolves the caller from `Authorization: Bearer <token>` (CLI, HTTP API) or the session cookie
 * (dashboard). Changes made with the cookie must carry the session's CSRF token in
 * `X-CSRF-Token`; a bearer token needs none, since browsers never send it on their own.
 */
export function authenticator(ctx: PlatformContext) {
  return async (
    request: FastifyRequest,
    operation: AnyOperation<PlatformContext>,
  ): Promise<Caller | undefined> => {
    const access = (operation.access ?? 'user') as Access;
    if (access === 'public') return undefined;
    const unauthenticated = (message: string) =>
      platformErrors.error('unauthenticated', message, {
        headers: { 'www-authenticate': 'Bearer realm="kennel"' },
      });
    let caller: Caller | undefined;
    const authorization = request.headers.authorization;
    if (authorization !== undefined) {
      const match = /^Bearer\s+(\S+)$/i.exec(authorization);
      const holder = match?.[1] ? await tokenHolder(ctx, match[1]) : undefined;
      if (holder && 'expired' in holder) {
        throw platformErrors.error(
          'token_expired',
          `This API token expired at ${holder.expired}: create a new one (dashboard Account page, POST /api/v1/tokens, or kennel login) and use it instead.`,
          { headers: { 'www-authenticate': 'Bearer realm="kennel", error="invalid_token"' } },
        );
      }
      if (!holder)
        throw unauthenticated(
          'The API token is not valid (revoked, or mistyped): sign in again to create a new one.',
        );
      if (holder.scope === 'read' && !READ_METHODS.has(request.method)) {
        throw platformErrors.error(
          'token_read_only',
          `This API token is read-only: it may only read (GET). To ${request.method} ${operation.path}, use a token with full scope (create one on the dashboard Account page or with kennel login).`,
        );
      }
      caller = { actor: holder.actor, scope: holder.scope };
    } else {
      const name = sessionCookieName(cameOverHttps(request));
      const cookie = request.headers.cookie ? parseCookie(request.headers.cookie)[name] : undefined;
      const session = cookie ? await sessionFor(ctx, cookie) : undefined;
      if (!session || !cookie) {
        throw unauthenticated(
          'Sign in first: send Authorization: Bearer <API token>, or sign in to the dashboard.',
        );
      }
      if (!SAFE_METHODS.has(request.method) && request.headers['x-csrf-token'] !== session.csrfToken) {
        throw platformErrors.error(
          'csrf_failed',
          'This change needs the X-CSRF-Token header of your session. Reload the dashboard and try again.',
        );
      }
      caller = { actor: session.actor, sessionCookie: cookie, csrfToken: session.csrfToken };
    }
    if (access === 'admin' && !caller.actor.isAdmin) {
      throw platformErrors.error('forbidden', 'Only a platform admin can do this.');
    }
    return caller;
  };
}

export function actorOf(caller: unknown): Actor {
  return (caller as Caller).actor;
}
