/**
 * A project's CORS policy: which browser apps on other origins may call its published API, and
 * how. Shared by the platform (which validates and stores it) and the edge (which answers
 * preflights and stamps answers from it, src/edge/cors.ts). Off unless `enabled`.
 */
export interface CorsPolicy {
  readonly enabled: boolean;
  /** Exact origins (`https://app.example.com`, `http://localhost:5173`), or `*` alone without credentials. */
  readonly allowedOrigins: readonly string[];
  /** Methods a preflight may ask for (uppercase), or `*` without credentials. */
  readonly allowedMethods: readonly string[];
  /** Request headers a preflight may ask for (lowercase), or `*` without credentials. */
  readonly allowedHeaders: readonly string[];
  /** Response headers a browser app may read beyond the safelisted ones (lowercase). */
  readonly exposeHeaders: readonly string[];
  /** Whether cookies and HTTP authentication go along (`Access-Control-Allow-Credentials: true`). */
  readonly allowCredentials: boolean;
  /** How long a browser may cache a preflight's answer (Access-Control-Max-Age). */
  readonly maxAgeSeconds: number;
}

/** A project's policy until someone sets one: off, with the settings a typical app needs. */
export const DEFAULT_CORS_POLICY: CorsPolicy = {
  enabled: false,
  allowedOrigins: [],
  allowedMethods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
  allowedHeaders: ['authorization', 'content-type'],
  exposeHeaders: [],
  allowCredentials: false,
  maxAgeSeconds: 600,
};

export const CORS_LIMITS = { items: 50, maxAgeSeconds: 86_400 } as const;

/** One problem with a policy, named by its field so a form can show it under that field. */
export interface CorsProblem {
  readonly field: keyof CorsPolicy;
  readonly message: string;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Why `origin` is not an exact origin (scheme://host[:port]), or undefined when it is one. */
function originProblem(origin: string): string | undefined {
  if (origin === '*') return undefined;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return `${JSON.stringify(origin)} is not an origin: write scheme://host[:port], e.g. https://app.example.com.`;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return `${JSON.stringify(origin)} is not an http(s) origin: write https://host[:port].`;
  }
  // A browser sends Origin in exactly URL's serialization; anything else would never match.
  if (url.origin !== origin) {
    return `${JSON.stringify(origin)} is not an exact origin (no path, query, trailing slash or user; lower-case host; no default port): write ${url.origin}.`;
  }
  return undefined;
}

/**
 * Checks and normalises a policy: methods upper-cased, header names lower-cased, duplicates
 * dropped. Every problem is reported, each under its field.
 */
export function validateCorsPolicy(
  input: CorsPolicy,
): { ok: true; policy: CorsPolicy } | { ok: false; problems: CorsProblem[] } {
  const problems: CorsProblem[] = [];
  const list = (
    field: 'allowedOrigins' | 'allowedMethods' | 'allowedHeaders' | 'exposeHeaders',
    normalise: (value: string) => string,
  ) => {
    const values = [...new Set(input[field].map((v) => normalise(v.trim())))];
    if (values.length > CORS_LIMITS.items) {
      problems.push({ field, message: `At most ${CORS_LIMITS.items} entries; this has ${values.length}.` });
    }
    return values;
  };
  // Origins as written: a browser's Origin is compared byte for byte, so a wrong case is refused below.
  const allowedOrigins = list('allowedOrigins', (o) => o);
  const allowedMethods = list('allowedMethods', (m) => m.toUpperCase());
  const allowedHeaders = list('allowedHeaders', (h) => h.toLowerCase());
  const exposeHeaders = list('exposeHeaders', (h) => h.toLowerCase());
  for (const origin of allowedOrigins) {
    const problem = originProblem(origin);
    if (problem) problems.push({ field: 'allowedOrigins', message: problem });
  }
  if (allowedOrigins.includes('*') && allowedOrigins.length > 1) {
    problems.push({
      field: 'allowedOrigins',
      message: '`*` allows every origin: list it alone, or list exact origins without it.',
    });
  }
  if (input.enabled && allowedOrigins.length === 0) {
    problems.push({
      field: 'allowedOrigins',
      message: 'Name at least one origin (e.g. https://app.example.com) to turn CORS on.',
    });
  }
  for (const [field, values] of [
    ['allowedMethods', allowedMethods],
    ['allowedHeaders', allowedHeaders],
    ['exposeHeaders', exposeHeaders],
  ] as const) {
    for (const value of values) {
      if (!TOKEN.test(value)) {
        problems.push({
          field,
          message: `${JSON.stringify(value)} is not a valid ${field === 'allowedMethods' ? 'method' : 'header name'}.`,
        });
      }
    }
  }
  if (input.allowCredentials) {
    // Browsers ignore `*` on a credentialed request (Fetch standard): it would silently not work.
    for (const [field, values] of [
      ['allowedOrigins', allowedOrigins],
      ['allowedMethods', allowedMethods],
      ['allowedHeaders', allowedHeaders],
      ['exposeHeaders', exposeHeaders],
    ] as const) {
      if (values.includes('*')) {
        problems.push({
          field,
          message:
            '`*` cannot be used with credentials (browsers refuse it): list exact values, or turn credentials off.',
        });
      }
    }
  }
  if (
    !Number.isInteger(input.maxAgeSeconds) ||
    input.maxAgeSeconds < 0 ||
    input.maxAgeSeconds > CORS_LIMITS.maxAgeSeconds
  ) {
    problems.push({
      field: 'maxAgeSeconds',
      message: `Max age is whole seconds from 0 to ${CORS_LIMITS.maxAgeSeconds} (a day).`,
    });
  }
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    policy: {
      enabled: input.enabled,
      allowedOrigins,
      allowedMethods,
      allowedHeaders,
      exposeHeaders,
      allowCredentials: input.allowCredentials,
      maxAgeSeconds: input.maxAgeSeconds,
    },
  };
}
