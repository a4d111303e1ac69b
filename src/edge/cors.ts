import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { CorsPolicy } from '../lib/cors-policy.ts';
import { edgeErrors } from './errors.ts';
import { sendError } from './json-answer.ts';

/**
 * CORS at the edge, from a project's policy (src/lib/cors-policy.ts): the answer to a preflight,
 * and the headers an actual answer carries. Pure, so each row of the rules is tested alone
 * (test/edge/cors.test.ts); the edge's steps (steps/site.ts, steps/api.ts) only call these.
 */

export type PreflightAnswer =
  | { readonly allowed: true; readonly headers: Record<string, string> }
  | { readonly allowed: false; readonly message: string; readonly headers: Record<string, string> };

const one = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value;

/** A CORS preflight: OPTIONS with Origin and Access-Control-Request-Method. */
export function isPreflight(method: string | undefined, headers: IncomingHttpHeaders): boolean {
  return (
    method === 'OPTIONS' &&
    one(headers.origin) !== undefined &&
    one(headers['access-control-request-method']) !== undefined
  );
}

function originAllowed(policy: CorsPolicy, origin: string): boolean {
  return policy.allowedOrigins.includes('*') || policy.allowedOrigins.includes(origin);
}

/** The origin to name in Access-Control-Allow-Origin: `*` when every origin may and no credentials go. */
function allowOrigin(policy: CorsPolicy, origin: string): string {
  return policy.allowedOrigins.includes('*') && !policy.allowCredentials ? '*' : origin;
}

/**
 * Answers a preflight from the policy, or undefined when the request is not a preflight or the
 * policy is off (then it goes to the origin as before). Refused preflights carry no allow
 * headers, so the browser blocks the actual request.
 */
export function preflight(
  policy: CorsPolicy | undefined,
  method: string | undefined,
  headers: IncomingHttpHeaders,
): PreflightAnswer | undefined {
  if (!policy?.enabled || !isPreflight(method, headers)) return undefined;
  const origin = one(headers.origin) as string;
  const requested = one(headers['access-control-request-method']) as string;
  const vary = { vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers' };
  if (!originAllowed(policy, origin)) {
    return {
      allowed: false,
      headers: vary,
      message: `Origin ${origin} may not call this API from a browser. A team member can add it to the project's CORS allowed origins.`,
    };
  }
  const anyMethod = policy.allowedMethods.includes('*');
  if (!anyMethod && !policy.allowedMethods.includes(requested)) {
    return {
      allowed: false,
      headers: vary,
      message: `Method ${requested} is not among the project's CORS allowed methods (${policy.allowedMethods.join(', ') || 'none'}). A team member can add it.`,
    };
  }
  const asked = (one(headers['access-control-request-headers']) ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter((h) => h !== '');
  const anyHeader = policy.allowedHeaders.includes('*');
  const refused = anyHeader ? [] : asked.filter((h) => !policy.allowedHeaders.includes(h));
  if (refused.length > 0) {
    return {
      allowed: false,
      headers: vary,
      message: `Request header${refused.length > 1 ? 's' : ''} ${refused.join(', ')} ${refused.length > 1 ? 'are' : 'is'} not among the project's CORS allowed headers (${policy.allowedHeaders.join(', ') || 'none'}). A team member can add ${refused.length > 1 ? 'them' : 'it'}.`,
    };
  }
  const answer: Record<string, string> = {
    'access-control-allow-origin': allowOrigin(policy, origin),
    // The method asked for, or the list: both satisfy the browser.
    'access-control-allow-methods': anyMethod ? requested : policy.allowedMethods.join(', '),
    'access-control-max-age': String(policy.maxAgeSeconds),
    ...vary,
  };
  if (asked.length > 0) answer['access-control-allow-headers'] = asked.join(', ');
  if (policy.allowCredentials) answer['access-control-allow-credentials'] = 'true';
  return { allowed: true, headers: answer };
}

/**
 * The CORS headers of an actual answer (they replace any the origin sent): for an allowed Origin
 * the allow headers; always `Vary: Origin` when the answer depends on it, so caches keep apart
 * the answers for different origins. Undefined when the policy is off: the origin's headers pass.
 */
export function responseHeaders(
  policy: CorsPolicy | undefined,
  origin: string | string[] | undefined,
): Record<string, string> | undefined {
  if (!policy?.enabled) return undefined;
  const from = one(origin);
  const wildcard = policy.allowedOrigins.includes('*') && !policy.allowCredentials;
  const headers: Record<string, string> = wildcard ? {} : { vary: 'Origin' };
  if (from === undefined || !originAllowed(policy, from)) return headers;
  headers['access-control-allow-origin'] = allowOrigin(policy, from);
  if (policy.allowCredentials) headers['access-control-allow-credentials'] = 'true';
  if (policy.exposeHeaders.length > 0)
    headers['access-control-expose-headers'] = policy.exposeHeaders.join(', ');
  return headers;
}

/** The published document's headers: any page may load it (it is public, and sent without credentials). */
export const DOCUMENT_CORS_HEADERS: Readonly<Record<string, string>> = {
  'access-control-allow-origin': '*',
};

/** The answer to a preflight for the published document (GET and HEAD from anywhere). */
export function documentPreflight(headers: IncomingHttpHeaders): Record<string, string> {
  const asked = one(headers['access-control-request-headers']);
  return {
    ...DOCUMENT_CORS_HEADERS,
    'access-control-allow-methods': 'GET, HEAD',
    ...(asked !== undefined && asked.trim() !== '' && { 'access-control-allow-headers': asked }),
    'access-control-max-age': '86400',
  };
}

/** Sends a preflight's answer: 204 with the allow headers, or 403 `cors_not_allowed` without them. */
export function sendPreflight(res: ServerResponse, answer: PreflightAnswer, requestId: string): void {
  if (!answer.allowed) {
    sendError(
      res,
      edgeErrors.error('cors_not_allowed', answer.message, { headers: answer.headers }),
      requestId,
    );
    return;
  }
  res.writeHead(204, { ...answer.headers, 'x-request-id': requestId });
  res.end();
}
