import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { proxyErrorKind, statusClass } from '../../src/edge/index.ts';

describe('metric labels: proxy error kinds and status classes', () => {
  it('sorts undici and socket errors into a closed set of kinds', () => {
    const kinds = Object.fromEntries(
      [
        'ECONNREFUSED',
        'EHOSTUNREACH',
        'ENOTFOUND',
        'UND_ERR_CONNECT_TIMEOUT',
        'ETIMEDOUT',
        'UND_ERR_HEADERS_TIMEOUT',
        'UND_ERR_BODY_TIMEOUT',
        'UND_ERR_SOCKET',
        'ECONNRESET',
        'EPIPE',
        'HPE_INVALID_CONSTANT',
        'SOMETHING_ELSE',
      ].map((code) => [code, proxyErrorKind(Object.assign(new Error(code), { code }))]),
    );
    assert.deepEqual(kinds, {
      ECONNREFUSED: 'connect_refused',
      EHOSTUNREACH: 'connect_refused',
      ENOTFOUND: 'connect_refused',
      UND_ERR_CONNECT_TIMEOUT: 'connect_timeout',
      ETIMEDOUT: 'connect_timeout',
      UND_ERR_HEADERS_TIMEOUT: 'timeout',
      UND_ERR_BODY_TIMEOUT: 'timeout',
      UND_ERR_SOCKET: 'reset',
      ECONNRESET: 'reset',
      EPIPE: 'reset',
      HPE_INVALID_CONSTANT: 'bad_response',
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
