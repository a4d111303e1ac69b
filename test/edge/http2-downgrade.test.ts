import assert from 'node:assert/strict';
import type { ClientHttp2Session } from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { closeAll } from '../support/cleanup.ts';
import { startTestEdge, type TestEdge } from '../support/edge.ts';
import type { SeenRequest } from '../support/edge-site.ts';
import { SMUGGLED, type SmugglingTarget, startSmugglingTarget } from '../support/edge-smuggling.ts';
import { dataFrame, headersFrame, http2Request, http2Session, RawHttp2 } from '../support/http2-frames.ts';

const SITE = 'shop.platform.test';
const PROTOCOL_ERROR = 1;

/**
 * The HTTP/2 → HTTP/1.1 downgrade corpus (RFC 9113 §8.2, §8.3): each malformed request goes to the
 * edge over a raw h2 connection of its own, written frame by frame as no client library would,
 * and a victim's request follows on another connection. Whatever the attack, the origin never
 * reads a request the edge did not forward as sent (the payloads carry `GET /smuggled` and an
 * unfinished `DELETE` that would swallow the victim's request line), and the victim gets its own
 * answer. A malformed request is reset (PROTOCOL_ERROR) or answered 400, never forwarded.
 */
describe('HTTP/2 to HTTP/1.1: the downgrade cannot smuggle', () => {
  let target: SmugglingTarget;
  let edge: TestEdge;
  let victimSession: ClientHttp2Session;

  before(async () => {
    target = await startSmugglingTarget(
      ({ url, headers, body }) => ({ url, auth: headers.authorization ?? null, body }),
      { now: true },
    );
    edge = await startTestEdge(target.site.p, { certificateFor: SITE });
    victimSession = await http2Session(edge.httpsPort, SITE);
  });

  after(async () => {
    victimSession?.destroy();
    await closeAll(edge, target);
  });

  const request = (path = '/api/attack', method = 'POST'): [string, string][] => [
    [':method', method],
    [':scheme', 'https'],
    [':authority', SITE],
    [':path', path],
  ];

  /** `refused`: the stream is reset, or answered 400, and nothing reaches the origin. */
  /**
   * `dropped`: nghttp2 removes a field with CR, LF or NUL in its name or value before node:http2
   * sees the request (rather than resetting the stream); what reaches the edge, and the origin,
   * is the request without it.
   */
  const corpus: {
    name: string;
    frames: (stream: number) => Buffer[];
    expect: 'refused' | { forwarded: string } | { dropped: string };
  }[] = [
    {
      name: 'Content-Length shorter than the DATA sent',
      frames: (s) => [
        headersFrame(s, [...request(), ['content-length', '4']], { endStream: false }),
        dataFrame(s, `ABCD${SMUGGLED}`),
      ],
      expect: 'refused',
    },
    {
      name: 'Content-Length longer than the DATA sent',
      frames: (s) => [
        headersFrame(s, [...request(), ['content-length', String(SMUGGLED.length + 40)]], {
          endStream: false,
        }),
        dataFrame(s, SMUGGLED),
      ],
      expect: 'refused',
    },
    {
      name: 'Content-Length on a request whose HEADERS end the stream',
      frames: (s) => [headersFrame(s, [...request(), ['content-length', '40']])],
      expect: 'refused',
    },
    {
      name: 'two Content-Length values',
      frames: (s) => [
        headersFrame(s, [...request(), ['content-length', '4'], ['content-length', '40']], {
          endStream: false,
        }),
        dataFrame(s, 'ABCD'),
      ],
      expect: 'refused',
    },
    {
      name: 'a list-valued Content-Length',
      frames: (s) => [
        headersFrame(s, [...request(), ['content-length', '4, 4']], { endStream: false }),
        dataFrame(s, 'ABCD'),
      ],
      expect: 'refused',
    },
    {
      name: 'Transfer-Encoding: chunked with a chunked body carrying a request',
      frames: (s) => [
        headersFrame(s, [...request(), ['transfer-encoding', 'chunked']], { endStream: false }),
        dataFrame(s, `0\r\n\r\n${SMUGGLED}`),
      ],
      expect: 'refused',
    },
    ...['connection', 'keep-alive', 'proxy-connection', 'upgrade'].map((name) => ({
      name: `the connection-specific header ${name}`,
      frames: (s: number) => [
        headersFrame(s, [...request(), [name, name === 'upgrade' ? 'h2c' : 'keep-alive']]),
      ],
      expect: 'refused' as const,
    })),
    {
      name: 'TE other than trailers',
      frames: (s) => [headersFrame(s, [...request(), ['te', 'gzip']])],
      expect: 'refused',
    },
    {
      name: 'an uppercase header name',
      frames: (s) => [headersFrame(s, [...request(), ['Content-Length', '0']])],
      expect: 'refused',
    },
    ...[
      ['CR LF', '\r\n'],
      ['a bare LF', '\n'],
      ['a bare CR', '\r'],
      ['NUL', '\0'],
    ].flatMap(([what, bytes]) => [
      {
        name: `${what} in a header value (a header injected into the HTTP/1.1 request)`,
        frames: (s: number) => [
          headersFrame(s, [
            ...request(),
            ['x-note', `a${bytes}transfer-encoding: chunked${bytes}x: ${SMUGGLED}`],
          ]),
        ],
        expect: { dropped: 'x-note' },
      },
      {
        name: `${what} in a header name`,
        frames: (s: number) => [headersFrame(s, [...request(), [`x-a${bytes}x-b`, 'v']])],
        expect: { dropped: 'x-a' },
      },
    ]),
    {
      name: 'CR LF in :path (a second request line)',
      frames: (s) => [headersFrame(s, request(`/api/x HTTP/1.1\r\nHost: shop\r\n\r\n${SMUGGLED}`, 'GET'))],
      expect: 'refused',
    },
    {
      name: 'a space in :path (an HTTP/1.1 request line with a version)',
      frames: (s) => [headersFrame(s, request('/api/x HTTP/1.1', 'GET'))],
      expect: 'refused',
    },
    {
      name: ':path not starting with /',
      frames: (s) => [headersFrame(s, request('api/attack', 'GET'))],
      expect: 'refused',
    },
    {
      name: ':path in absolute form',
      frames: (s) => [headersFrame(s, request('http://evil.test/api/attack', 'GET'))],
      expect: 'refused',
    },
    {
      name: 'a pseudo-header after a regular header',
      frames: (s) => [
        headersFrame(s, [
          [':method', 'GET'],
          [':scheme', 'https'],
          ['x-a', 'b'],
          [':authority', SITE],
          [':path', '/api/attack'],
        ]),
      ],
      expect: 'refused',
    },
    {
      name: 'a repeated :path',
      frames: (s) => [headersFrame(s, [...request('/api/attack', 'GET'), [':path', '/api/smuggled']])],
      expect: 'refused',
    },
    {
      name: 'a repeated :method',
      frames: (s) => [headersFrame(s, [[':method', 'GET'], ...request('/api/attack', 'DELETE')])],
      expect: 'refused',
    },
    {
      name: 'an unknown pseudo-header',
      frames: (s) => [headersFrame(s, [...request('/api/attack', 'GET'), [':smuggle', 'yes']])],
      expect: 'refused',
    },
    {
      name: 'a response pseudo-header in a request',
      frames: (s) => [headersFrame(s, [...request('/api/attack', 'GET'), [':status', '200']])],
      expect: 'refused',
    },
    {
      name: 'no :path',
      frames: (s) => [
        headersFrame(s, [
          [':method', 'GET'],
          [':scheme', 'https'],
          [':authority', SITE],
        ]),
      ],
      expect: 'refused',
    },
    {
      name: 'a Host that differs from :authority',
      frames: (s) => [headersFrame(s, [...request('/api/attack', 'GET'), ['host', 'other.platform.test']])],
      expect: 'refused',
    },
    {
      name: 'two Host headers',
      frames: (s) => [
        headersFrame(s, [...request('/api/attack', 'GET'), ['host', SITE], ['host', 'other.platform.test']]),
      ],
      expect: 'refused',
    },
    {
      name: 'control: a Content-Length that matches the DATA is forwarded with it',
      frames: (s) => [
        headersFrame(s, [...request(), ['content-length', String(SMUGGLED.length)]], { endStream: false }),
        dataFrame(s, SMUGGLED),
      ],
      expect: { forwarded: SMUGGLED },
    },
    {
      name: 'control: no Content-Length, the body in two DATA frames (sent chunked)',
      frames: (s) => [
        headersFrame(s, [...request(), ['te', 'trailers']], { endStream: false }),
        dataFrame(s, SMUGGLED.slice(0, 10), false),
        dataFrame(s, SMUGGLED.slice(10)),
      ],
      expect: { forwarded: SMUGGLED },
    },
    {
      name: 'control: a Host equal to :authority',
      frames: (s) => [headersFrame(s, [...request('/api/attack', 'GET'), ['host', SITE]])],
      expect: { forwarded: '' },
    },
  ];

  for (const attack of corpus) {
    it(`${attack.name}: ${attack.expect === 'refused' ? 'refused, never forwarded' : 'dropped' in attack.expect ? 'the field dropped, never forwarded' : 'forwarded as the edge frames it'}; the victim is served`, async () => {
      const before = target.origin.seen.length;
      const raw = await RawHttp2.open(edge.httpsPort, SITE);
      try {
        raw.write(...attack.frames(1));
        const outcome = await raw.outcome(1);
        if (attack.expect === 'refused') {
          // A stream error, the edge's 400, or (DATA past Content-Length) the whole connection.
          const refused =
            outcome.reset === PROTOCOL_ERROR || outcome.status === 400 || outcome.goaway !== undefined;
          assert.ok(refused, `expected a refusal, got ${JSON.stringify(outcome)}`);
        } else assert.equal(outcome.status, 200);
        // Whatever the edge might still have sent on arrives before the victim's request.
        await new Promise((resolve) => setTimeout(resolve, 100));
      } finally {
        raw.close();
      }
      const victim = await http2Request(victimSession, {
        ':method': 'GET',
        ':path': '/api/victim',
        ':authority': SITE,
        authorization: 'Bearer victim-secret',
      });
      assert.equal(victim.status, 200, victim.text);
      assert.deepEqual(JSON.parse(victim.text), { url: '/victim', auth: 'Bearer victim-secret', body: '' });
      const during = target.origin.seen.slice(before);
      assert.ok(
        !during.some((r) => r.url.includes('smuggled') || r.method === 'DELETE'),
        JSON.stringify(during),
      );
      if (attack.expect === 'refused') {
        assert.deepEqual(
          during.map((r) => r.url),
          ['/victim'],
        );
      } else if ('dropped' in attack.expect) {
        const name = attack.expect.dropped;
        assert.deepEqual(
          during.map((r) => [r.method, r.url, r.body]),
          [
            ['POST', '/attack', ''],
            ['GET', '/victim', ''],
          ],
        );
        const forwarded = during[0] as SeenRequest;
        assert.ok(
          !Object.keys(forwarded.headers).some((h) => h.startsWith(name)),
          JSON.stringify(forwarded.headers),
        );
        assert.equal(forwarded.headers['transfer-encoding'], undefined);
      } else {
        assert.deepEqual(
          during.map((r) => [r.method, r.url, r.body]),
          [
            [attack.expect.forwarded === '' ? 'GET' : 'POST', '/attack', attack.expect.forwarded],
            ['GET', '/victim', ''],
          ],
        );
        const forwarded = during[0] as SeenRequest;
        assert.equal(forwarded.headers.host, `127.0.0.1:${target.origin.port}`);
        assert.equal(forwarded.headers['x-forwarded-host'], SITE);
        assert.equal(forwarded.headers['x-forwarded-proto'], 'https');
        assert.equal(forwarded.headers.te, undefined);
        assert.ok(!Object.keys(forwarded.headers).some((name) => name.startsWith(':')));
      }
    });
  }
});
