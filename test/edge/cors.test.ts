import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { documentPreflight, preflight, responseHeaders } from '../../src/edge/cors.ts';
import { type CorsPolicy, DEFAULT_CORS_POLICY, validateCorsPolicy } from '../../src/lib/cors-policy.ts';

/** The CORS rules row by row: policy validation, preflight answers, actual answers' headers. */

const APP = 'https://app.example.com';
const on: CorsPolicy = {
  ...DEFAULT_CORS_POLICY,
  enabled: true,
  allowedOrigins: [APP, 'http://localhost:5173'],
  exposeHeaders: ['etag', 'link'],
};
const withCredentials: CorsPolicy = { ...on, allowCredentials: true };
const anyOrigin: CorsPolicy = { ...on, allowedOrigins: ['*'] };
const VARY = 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers';

describe('validateCorsPolicy', () => {
  const rows: { name: string; change: Partial<CorsPolicy>; problems: [keyof CorsPolicy, RegExp][] }[] = [
    { name: 'exact origins', change: {}, problems: [] },
    { name: '* alone without credentials', change: { allowedOrigins: ['*'] }, problems: [] },
    {
      name: '* with credentials',
      change: { allowedOrigins: ['*'], allowCredentials: true },
      problems: [['allowedOrigins', /cannot be used with credentials/]],
    },
    {
      name: '* among exact origins',
      change: { allowedOrigins: ['*', APP] },
      problems: [['allowedOrigins', /list it alone/]],
    },
    {
      name: 'an origin with a path',
      change: { allowedOrigins: ['https://app.example.com/app'] },
      problems: [['allowedOrigins', /not an exact origin .* write https:\/\/app\.example\.com\.$/]],
    },
    {
      name: 'an origin with a trailing slash',
      change: { allowedOrigins: ['https://app.example.com/'] },
      problems: [['allowedOrigins', /write https:\/\/app\.example\.com\.$/]],
    },
    {
      name: 'an upper-case host',
      change: { allowedOrigins: ['https://App.Example.com'] },
      problems: [['allowedOrigins', /write https:\/\/app\.example\.com\.$/]],
    },
    {
      name: 'a default port',
      change: { allowedOrigins: ['https://app.example.com:443'] },
      problems: [['allowedOrigins', /write https:\/\/app\.example\.com\.$/]],
    },
    {
      name: 'not a URL',
      change: { allowedOrigins: ['app.example.com'] },
      problems: [['allowedOrigins', /is not an origin: write scheme:\/\/host\[:port\]/]],
    },
    {
      name: 'another scheme',
      change: { allowedOrigins: ['ftp://app.example.com'] },
      problems: [['allowedOrigins', /not an http\(s\) origin/]],
    },
    {
      name: 'on without origins',
      change: { allowedOrigins: [] },
      problems: [['allowedOrigins', /Name at least one origin/]],
    },
    { name: 'off without origins', change: { enabled: false, allowedOrigins: [] }, problems: [] },
    {
      name: 'a method that is no token',
      change: { allowedMethods: ['GET', 'PU T'] },
      problems: [['allowedMethods', /"PU T" is not a valid method/]],
    },
    {
      name: 'a header that is no token',
      change: { allowedHeaders: ['x:y'] },
      problems: [['allowedHeaders', /"x:y" is not a valid header name/]],
    },
    {
      name: '* headers with credentials',
      change: { allowedHeaders: ['*'], allowCredentials: true },
      problems: [['allowedHeaders', /cannot be used with credentials/]],
    },
    {
      name: 'max age above a day',
      change: { maxAgeSeconds: 86_401 },
      problems: [['maxAgeSeconds', /0 to 86400/]],
    },
    {
      name: 'max age not whole',
      change: { maxAgeSeconds: 1.5 },
      problems: [['maxAgeSeconds', /whole seconds/]],
    },
  ];
  for (const row of rows) {
    it(`${row.name}: ${row.problems.length === 0 ? 'accepted' : 'refused'}`, () => {
      const result = validateCorsPolicy({ ...on, ...row.change });
      if (row.problems.length === 0) {
        assert.equal(result.ok, true, JSON.stringify(result));
        return;
      }
      assert.equal(result.ok, false);
      if (result.ok) return;
      assert.equal(result.problems.length, row.problems.length, JSON.stringify(result.problems));
      for (const [i, [field, message]] of row.problems.entries()) {
        assert.equal(result.problems[i]?.field, field);
        assert.match(result.problems[i]?.message ?? '', message);
      }
    });
  }

  it('normalises: methods upper-case, header names lower-case, duplicates dropped', () => {
    const result = validateCorsPolicy({
      ...on,
      allowedMethods: ['get', 'GET', 'put'],
      allowedHeaders: ['Authorization', 'authorization', 'If-Match'],
      exposeHeaders: ['ETag'],
    });
    assert.ok(result.ok);
    assert.deepEqual(result.policy.allowedMethods, ['GET', 'PUT']);
    assert.deepEqual(result.policy.allowedHeaders, ['authorization', 'if-match']);
    assert.deepEqual(result.policy.exposeHeaders, ['etag']);
  });
});

describe('preflight', () => {
  const ask = (origin: string, method: string, headers?: string) => ({
    origin,
    'access-control-request-method': method,
    ...(headers !== undefined && { 'access-control-request-headers': headers }),
  });
  const rows: {
    name: string;
    policy: CorsPolicy | undefined;
    method?: string;
    headers: Record<string, string>;
    answer: ReturnType<typeof preflight>;
  }[] = [
    { name: 'no policy: forwarded', policy: undefined, headers: ask(APP, 'PUT'), answer: undefined },
    {
      name: 'policy off: forwarded',
      policy: { ...on, enabled: false },
      headers: ask(APP, 'PUT'),
      answer: undefined,
    },
    {
      name: 'OPTIONS without Origin: not a preflight',
      policy: on,
      headers: { 'access-control-request-method': 'PUT' },
      answer: undefined,
    },
    {
      name: 'OPTIONS without a requested method: not a preflight',
      policy: on,
      headers: { origin: APP },
      answer: undefined,
    },
    {
      name: 'GET with preflight headers: not a preflight',
      policy: on,
      method: 'GET',
      headers: ask(APP, 'PUT'),
      answer: undefined,
    },
    {
      name: 'allowed origin, method and headers',
      policy: on,
      headers: ask(APP, 'PUT', 'Content-Type, Authorization'),
      answer: {
        allowed: true,
        headers: {
          'access-control-allow-origin': APP,
          'access-control-allow-methods': 'GET, HEAD, POST, PUT, PATCH, DELETE',
          'access-control-allow-headers': 'content-type, authorization',
          'access-control-max-age': '600',
          vary: VARY,
        },
      },
    },
    {
      name: 'with credentials',
      policy: withCredentials,
      headers: ask('http://localhost:5173', 'DELETE'),
      answer: {
        allowed: true,
        headers: {
          'access-control-allow-origin': 'http://localhost:5173',
          'access-control-allow-methods': 'GET, HEAD, POST, PUT, PATCH, DELETE',
          'access-control-allow-credentials': 'true',
          'access-control-max-age': '600',
          vary: VARY,
        },
      },
    },
    {
      name: 'any origin without credentials: *',
      policy: anyOrigin,
      headers: ask('https://elsewhere.example', 'GET'),
      answer: {
        allowed: true,
        headers: {
          'access-control-allow-origin': '*',
          'access-control-allow-methods': 'GET, HEAD, POST, PUT, PATCH, DELETE',
          'access-control-max-age': '600',
          vary: VARY,
        },
      },
    },
    {
      name: 'any method and header: the ones asked for',
      policy: { ...on, allowedMethods: ['*'], allowedHeaders: ['*'] },
      headers: ask(APP, 'PURGE', 'x-anything'),
      answer: {
        allowed: true,
        headers: {
          'access-control-allow-origin': APP,
          'access-control-allow-methods': 'PURGE',
          'access-control-allow-headers': 'x-anything',
          'access-control-max-age': '600',
          vary: VARY,
        },
      },
    },
    {
      name: 'an origin not listed',
      policy: on,
      headers: ask('https://evil.example', 'GET'),
      answer: {
        allowed: false,
        headers: { vary: VARY },
        message:
          "Origin https://evil.example may not call this API from a browser. A team member can add it to the project's CORS allowed origins.",
      },
    },
    {
      name: 'a listed origin with another port',
      policy: on,
      headers: ask('http://localhost:5174', 'GET'),
      answer: {
        allowed: false,
        headers: { vary: VARY },
        message:
          "Origin http://localhost:5174 may not call this API from a browser. A team member can add it to the project's CORS allowed origins.",
      },
    },
    {
      name: 'a method not listed',
      policy: { ...on, allowedMethods: ['GET'] },
      headers: ask(APP, 'DELETE'),
      answer: {
        allowed: false,
        headers: { vary: VARY },
        message:
          "Method DELETE is not among the project's CORS allowed methods (GET). A team member can add it.",
      },
    },
    {
      name: 'headers not listed',
      policy: on,
      headers: ask(APP, 'POST', 'content-type, idempotency-key, x-trace'),
      answer: {
        allowed: false,
        headers: { vary: VARY },
        message:
          "Request headers idempotency-key, x-trace are not among the project's CORS allowed headers (authorization, content-type). A team member can add them.",
      },
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      assert.deepEqual(preflight(row.policy, row.method ?? 'OPTIONS', row.headers), row.answer);
    });
  }
});

describe('responseHeaders', () => {
  const rows: {
    name: string;
    policy: CorsPolicy | undefined;
    origin: string | undefined;
    headers: Record<string, string> | undefined;
  }[] = [
    { name: 'no policy: the origin decides', policy: undefined, origin: APP, headers: undefined },
    {
      name: 'policy off: the origin decides',
      policy: { ...on, enabled: false },
      origin: APP,
      headers: undefined,
    },
    {
      name: 'an allowed origin',
      policy: on,
      origin: APP,
      headers: {
        vary: 'Origin',
        'access-control-allow-origin': APP,
        'access-control-expose-headers': 'etag, link',
      },
    },
    {
      name: 'with credentials',
      policy: { ...withCredentials, exposeHeaders: [] },
      origin: APP,
      headers: {
        vary: 'Origin',
        'access-control-allow-origin': APP,
        'access-control-allow-credentials': 'true',
      },
    },
    {
      name: 'an origin not listed: only Vary',
      policy: on,
      origin: 'https://evil.example',
      headers: { vary: 'Origin' },
    },
    {
      name: 'no Origin (not a browser, or same origin): only Vary',
      policy: on,
      origin: undefined,
      headers: { vary: 'Origin' },
    },
    {
      name: 'any origin: *, no Vary',
      policy: { ...anyOrigin, exposeHeaders: [] },
      origin: 'https://elsewhere.example',
      headers: { 'access-control-allow-origin': '*' },
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      assert.deepEqual(responseHeaders(row.policy, row.origin), row.headers);
    });
  }
});

describe('documentPreflight', () => {
  it('allows GET and HEAD from anywhere, with the headers asked for', () => {
    assert.deepEqual(documentPreflight({ 'access-control-request-headers': 'x-client' }), {
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'GET, HEAD',
      'access-control-allow-headers': 'x-client',
      'access-control-max-age': '86400',
    });
    assert.deepEqual(documentPreflight({}), {
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'GET, HEAD',
      'access-control-max-age': '86400',
    });
  });
});
