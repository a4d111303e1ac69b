import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { proxyErrorKind, statusClass } from '../../src/edge/index.ts';

describe('metric labels: proxy error kinds and status classes', () => {
  it("sorts the origin client's and socket errors into a closed set of kinds", () => {
    const kinds = Object.fromEntries(
      [
        'ECONNREFUSED',
        'EHOSTUNREACH',
        'ENOTFOUND',
        'ORIGIN_CONNECT_TIMEOUT',
        'ETIMEDOUT',
        'ORIGIN_HEADERS_TIMEOUT',
        'ORIGIN_BODY_TIMEOUT',
        'ORIGIN_CLOSED',
        'ECONNRESET',
        'EPIPE',
        'ORIGIN_BAD_RESPONSE',
        'ERR_TLS_CERT_ALTNAME_INVALID',
        'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
        'SELF_SIGNED_CERT_IN_CHAIN',
        'SOMETHING_ELSE',
      ].map((code) => [code, proxyErrorKind(Object.assign(new Error(code), { code }))]),
    );
    assert.deepEqual(kinds, {
      ECONNREFUSED: 'connect_refused',
      EHOSTUNREACH: 'connect_refused',
      ENOTFOUND: 'connect_refused',
      ORIGIN_CONNECT_TIMEOUT: 'connect_timeout',
      ETIMEDOUT: 'connect_timeout',
      ORIGIN_HEADERS_TIMEOUT: 'timeout',
      ORIGIN_BODY_TIMEOUT: 'timeout',
      ORIGIN_CLOSED: 'reset',
      ECONNRESET: 'reset',
      EPIPE: 'reset',
      ORIGIN_BAD_RESPONSE: 'bad_response',
      ERR_TLS_CERT_ALTNAME_INVALID: 'bad_response',
      UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'bad_response',
      SELF_SIGNED_CERT_IN_CHAIN: 'bad_response',
      SOMETHING_ELSE: 'other',
    });
    assert.equal(proxyErrorKind(new Error('no code')), 'other');
    assert.equal(proxyErrorKind(undefined), 'other');
    assert.equal(proxyErrorKind('a string'), 'other');
  });

  it('gives a status class, or aborted when the response never finished', () => {
    assert.deepEqual(
      [101, 200, 204, 308, 404, 499, 502, 599].map((s) => statusClass(s, true)),
      ['1xx', '2xx', '2xx', '3xx', '4xx', '4xx', '5xx', '5xx'],
    );
    assert.equal(statusClass(200, false), 'aborted');
    assert.equal(statusClass(0, true), 'other');
  });
});
