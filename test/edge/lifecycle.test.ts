import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LifecycleRules } from '../../src/edge/lifecycle.ts';

describe('the deprecation lifecycle a document declares', () => {
  const deployedAt = new Date('2026-01-01T00:00:00Z');
  const rules = LifecycleRules.from(
    {
      openapi: '3.0.3',
      paths: {
        '/widgets/{widgetId}/parts/{partId}': {
          get: {
            deprecated: true,
            'x-sunset': '2027-06-30',
            'x-successor': '/parts/{partId}?widget={widgetId}',
          },
          put: { deprecated: true },
          delete: {
            deprecated: true,
            'x-deprecated-sunset': '2026-03-01T12:00:00Z',
            'x-deprecated-at': '2025-12-01',
          },
        },
        '/widgets': { get: { 'x-sunset': '2020-01-01' } },
      },
    },
    deployedAt,
  );

  it('matches templated paths and methods of deprecated operations with a sunset date only', () => {
    const now = Date.parse('2026-11-25T00:00:00Z');
    assert.deepEqual(rules.match('GET', '/widgets/7/parts/9', now), {
      deprecation: `@${deployedAt.getTime() / 1000}`,
      sunset: 'Wed, 30 Jun 2027 00:00:00 GMT',
      link: '</api/parts/9?widget=7>; rel="successor-version"',
      gone: false,
    });
    assert.equal(rules.match('HEAD', '/widgets/7/parts/9', now)?.gone, false);
    assert.equal(rules.match('PUT', '/widgets/7/parts/9', now), undefined, 'no sunset date: not enforced');
    assert.equal(rules.match('GET', '/widgets', now), undefined, 'not deprecated');
    assert.equal(rules.match('GET', '/widgets/7/parts', now), undefined);
    assert.equal(rules.match('GET', '/widgets/7/parts/9/x', now), undefined);
  });

  it('is gone from the sunset on, with its own deprecation date when given', () => {
    const gone = rules.match('DELETE', '/widgets/a/parts/b', Date.parse('2026-03-01T12:00:00Z'));
    assert.deepEqual(gone, {
      deprecation: `@${Date.parse('2025-12-01') / 1000}`,
      sunset: 'Sun, 01 Mar 2026 12:00:00 GMT',
      link: undefined,
      gone: true,
    });
    assert.equal(rules.match('GET', '/widgets/7/parts/9', Date.parse('2027-06-30T00:00:00Z'))?.gone, true);
  });

  it('is empty for a document without deprecated operations', () => {
    assert.equal(LifecycleRules.from({ paths: { '/a': { get: {} } } }, deployedAt).empty, true);
    assert.equal(LifecycleRules.from({ paths: {} }, deployedAt), LifecycleRules.none);
    assert.equal(LifecycleRules.none.empty, true);
  });
});

describe('a successor the document names, in a header', () => {
  it('is ignored unless it is a plain path, and path values are escaped where they would end the link', () => {
    const at = new Date('2026-01-01T00:00:00Z');
    const documentWith = (successor: string) => ({
      paths: { '/a/{id}': { get: { deprecated: true, 'x-sunset': '2030-01-01', 'x-successor': successor } } },
    });
    const now = Date.parse('2026-06-01T00:00:00Z');
    for (const hostile of [
      '/b\r\nSet-Cookie: x=1',
      '/b> ; rel="evil"',
      'https://elsewhere.test/b',
      '/b c',
      '/b"',
    ]) {
      assert.equal(
        LifecycleRules.from(documentWith(hostile), at).match('GET', '/a/1', now)?.link,
        undefined,
        hostile,
      );
    }
    assert.equal(
      LifecycleRules.from(documentWith('/b/{id}'), at).match('GET', '/a/x>y', now)?.link,
      '</api/b/x%3Ey>; rel="successor-version"',
    );
  });
});
