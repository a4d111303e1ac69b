import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type AnyOperation, fastifyPath } from '../../lib/http-api/index.ts';
import { petstoreErrors } from '../errors.ts';
import type { ApiKey, Scope } from '../store/keys.ts';
import type { KeyService } from './key-service.ts';
import type { RateLimitDecision, RateLimiter } from './rate-limiter.ts';

/** Who may call an operation: anyone, or a key holding this scope. */
export type Access = 'public' | Scope;

export interface GuardOptions {
  /** false turns authentication off (every operation public): for benchmarks only. */
  readonly authentication: boolean;
  /** false turns rate limiting off; otherwise one limiter per key and one per client address. */
  readonly rateLimit: false | { readonly perKey: RateLimiter; readonly perAddress: RateLimiter };
  /**
   * Trust `X-Forwarded-For` from a loopback peer (the platform's edge runs the Petstore behind
   * it): the client address is then the last address the proxy added.
   */
  readonly trustLoopbackProxy: boolean;
  /** Sent as `API-Version` on every answer. */
  readonly interfaceVersion: string;
}

const BEARER = /^Bearer +([^\s]+) *$/i;

/** The key in `Authorization: Bearer <key>`, if that is what the header holds. */
export function bearerSecret(authorization: string | string[] | undefined): string | undefined {
  if (typeof authorization !== 'string') return undefined;
  // The usual `Bearer pk_…` without a regular expression; anything else through it.
  if (authorization.startsWith('Bearer pk_') && authorization.indexOf(' ', 7) === -1)
    return authorization.slice(7);
  return BEARER.exec(authorization)?.[1];
}

export function accessOf<Deps>(op: AnyOperation<Deps>): Access {
  return (op.access ?? 'public') as Access;
}

/**
 * An `onRequest` hook in front of every route, before the body is read: it finds the caller's
 * key, counts the request against the caller's rate limit (per key, else per client address),
 * then checks the operation's scope. Refusals are 401 (no or unknown key, with
 * WWW-Authenticate), 403 (missing scope) and 429 (with Retry-After), each with the Error body.
 * Each route gets its own hook with its access baked in (reading `request.routeOptions` builds
 * an object per call); one global hook covers only requests that matched no route.
 */
export function installGuard<Deps>(
  app: FastifyInstance,
  operations: readonly AnyOperation<Deps>[],
  keys: KeyService,
  options: GuardOptions,
): void {
  const byRoute = new Map<string, Access>();
  for (const op of operations) byRoute.set(`${op.method} ${fastifyPath(op.path)}`, accessOf(op));
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const method = methods[0] === 'HEAD' ? 'GET' : methods[0];
    // With authentication off every operation is public: no key is looked up for access.
    const access = options.authentication ? (byRoute.get(`${method} ${route.url}`) ?? 'public') : 'public';
    const existing = route.onRequest === undefined ? [] : [route.onRequest].flat();
    route.onRequest = [guardFor(access), ...existing] as typeof route.onRequest;
  });

  const limits = options.rateLimit
    ? {
        key: limiter('key', options.rateLimit.perKey),
        address: limiter('address', options.rateLimit.perAddress),
      }
    : undefined;
  const version = options.interfaceVersion;

  /** The rate-limit fields, and 429 when the caller is past its quota. */
  const applyLimit = (
    reply: FastifyReply,
    limit: NamedLimiter,
    decision: RateLimitDecision,
    key: ApiKey | undefined,
  ): void => {
    reply.header('ratelimit-policy', limit.policyHeader);
    reply.header('ratelimit', `${limit.name};r=${decision.remaining};t=${decision.resetSeconds}`);
    if (!decision.allowed) {
      throw petstoreErrors.error(
        'rate_limited',
        `Too many requests: this ${key ? 'API key' : 'client address'} may send ${limit.limiter.policy.quota} per ${limit.limiter.policy.windowSeconds} s. Try again in ${decision.resetSeconds} s.`,
        { headers: { 'retry-after': String(decision.resetSeconds) } },
      );
    }
  };

  /** Counts the request (synchronously when the limiter can), then checks access; calls `done`. */
  const finish = (
    request: FastifyRequest,
    reply: FastifyReply,
    access: Access,
    key: ApiKey | undefined,
    sentKey: boolean,
    done: (error?: Error) => void,
  ): void => {
    try {
      if (limits) {
        const limit = key ? limits.key : limits.address;
        const decision = limit.limiter.take(
          key ? key.id : clientAddress(request, options.trustLoopbackProxy),
        );
        if (decision instanceof Promise) {
          decision.then((settled) => {
            try {
              applyLimit(reply, limit, settled, key);
              authorize(access, key, sentKey);
              done();
            } catch (error) {
              done(error as Error);
            }
          }, done);
          return;
        }
        applyLimit(reply, limit, decision, key);
      }
      authorize(access, key, sentKey);
      done();
    } catch (error) {
      done(error as Error);
    }
  };

  const authorize = (access: Access, key: ApiKey | undefined, sentKey: boolean): void => {
    if (access === 'public') return;
    if (!key) {
      throw petstoreErrors.error(
        'unauthenticated',
        sentKey
          ? 'The API key is not valid (revoked or mistyped). Send Authorization: Bearer <key> with a live key; an admin creates keys with kennel keys create.'
          : `This operation needs an API key with the scope ${access}. Send Authorization: Bearer <key>.`,
        {
          headers: {
            'www-authenticate': sentKey
              ? 'Bearer realm="petstore", error="invalid_token"'
              : 'Bearer realm="petstore"',
          },
        },
      );
    }
    if (!key.scopes.includes(access)) {
      throw petstoreErrors.error(
        'forbidden',
        `This operation needs the scope ${access}; the key ${key.prefix}… has ${key.scopes.join(', ') || 'none'}. Ask an admin for a key with ${access}.`,
        {
          headers: {
            'www-authenticate': `Bearer realm="petstore", error="insufficient_scope", scope="${access}"`,
          },
        },
      );
    }
  };

  const major = version.split('.')[0] as string;
  const guardFor =
    (access: Access) => (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
      reply.header('api-version', version);
      const asked = request.headers['api-version'];
      if (asked !== undefined && !acceptsVersion(asked, major)) {
        done(
          petstoreErrors.error(
            'unsupported_version',
            `API-Version ${JSON.stringify(asked)} is not served here: this server speaks ${version}. Send API-Version: ${major} (or leave it out).`,
          ),
        );
        return;
      }
      const authorization = request.headers.authorization;
      const secret = authorization === undefined ? undefined : bearerSecret(authorization);
      // A key sent to a public operation is resolved too, so its requests count against the key
      // rather than the address (and a wrong key there is simply ignored).
      const known = secret === undefined ? undefined : keys.cached(secret);
      if (known !== undefined || secret === undefined || (!limits && access === 'public')) {
        finish(request, reply, access, known, secret !== undefined, done);
        return;
      }
      keys.resolve(secret).then(
        (key) => finish(request, reply, access, key, true, done),
        (error: Error) => done(error),
      );
    };
  // Requests that matched no route: the version header and the per-address limit only.
  const unrouted = guardFor('public');
  app.addHook('onRequest', (request, reply, done) => {
    if (request.is404) unrouted(request, reply, done);
    else done();
  });
}

/** `1`, `1.2` or `1.2.3` for major 1: any 1.x answer suits a client written for 1.x. */
function acceptsVersion(asked: string | string[], major: string): boolean {
  if (typeof asked !== 'string') return false;
  const match = /^(\d+)(\.\d+){0,2}$/.exec(asked.trim());
  return match !== null && match[1] === major;
}

interface NamedLimiter {
  /** The policy's name as the RateLimit fields quote it. */
  readonly name: string;
  readonly limiter: RateLimiter;
  readonly policyHeader: string;
}

function limiter(name: string, limiter: RateLimiter): NamedLimiter {
  const quoted = `"${name}"`;
  const { policy } = limiter;
  return { name: quoted, limiter, policyHeader: `${quoted};q=${policy.quota};w=${policy.windowSeconds}` };
}

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/** The client's address; behind a trusted loopback proxy, the last X-Forwarded-For entry. */
export function clientAddress(request: FastifyRequest, trustLoopbackProxy: boolean): string {
  const peer = request.socket.remoteAddress ?? 'unknown';
  if (!trustLoopbackProxy || !LOOPBACK.has(peer)) return peer;
  const forwarded = request.headers['x-forwarded-for'];
  if (typeof forwarded !== 'string') return peer;
  const last = forwarded.slice(forwarded.lastIndexOf(',') + 1).trim();
  return last === '' ? peer : last;
}
