import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { describe, it } from 'node:test';
import {
  type AnswerFacts,
  type RequestFacts,
  requestHeaders,
  responseHeaders,
} from '../../src/edge/header-rules.ts';

/** The forwarding headers the edge appends to every request for `facts` below. */
const FORWARDING = [
  'x-forwarded-for',
  '203.0.113.7',
  'x-forwarded-host',
  'shop.example.com',
  'x-forwarded-proto',
  'https',
  'forwarded',
  'for=203.0.113.7;host=shop.example.com;proto=https',
  'x-request-id',
  'edge-id',
];
const facts: RequestFacts = {
  clientAddress: '203.0.113.7',
  host: 'shop.example.com',
  proto: 'https',
  requestId: 'edge-id',
};

describe('requestHeaders: what a request carries to the origin', () => {
  const rows: {
    rule: string;
    incoming: IncomingHttpHeaders;
    facts?: RequestFacts;
    contentLength?: number;
    out: string[];
  }[] = [
    {
      rule: 'end-to-end headers pass in order, repeated ones line by line',
      incoming: { accept: 'application/json', 'x-tag': ['a', 'b'], authorization: 'Bearer t' },
      out: [
        'accept',
        'application/json',
        'x-tag',
        'a',
        'x-tag',
        'b',
        'authorization',
        'Bearer t',
        ...FORWARDING,
      ],
    },
    {
      rule: 'hop-by-hop headers are dropped (RFC 9110 §7.6.1), h2c settings too',
      incoming: {
        connection: 'keep-alive',
        'keep-alive': 'timeout=5',
        'proxy-authorization': 'Basic x',
        'proxy-connection': 'keep-alive',
        te: 'trailers',
        trailer: 'x-sum',
        'transfer-encoding': 'chunked',
        upgrade: 'websocket',
        'http2-settings': 'AAMAAABkAAQAoAAAAAIAAAAA',
        accept: '*/*',
      },
      out: ['accept', '*/*', ...FORWARDING],
    },
    {
      rule: 'names the Connection header lists are hop-by-hop too',
      incoming: { connection: 'close, X-Secret, keep-alive', 'x-secret': 's', 'x-kept': 'k' },
      out: ['x-kept', 'k', ...FORWARDING],
    },
    {
      rule: "a client's forwarding headers and request id are replaced by the edge's",
      incoming: {
        host: 'evil.test',
        forwarded: 'for=10.0.0.1',
        'x-forwarded-for': '10.0.0.1',
        'x-forwarded-host': 'evil.test',
        'x-forwarded-proto': 'http',
        'x-forwarded-port': '80',
        'x-real-ip': '10.0.0.1',
        'x-client-ip': '10.0.0.1',
        'true-client-ip': '10.0.0.1',
        'x-request-id': 'forged',
        expect: '100-continue',
      },
      out: FORWARDING,
    },
    {
      rule: 'names with an underscore are dropped (CGI reads them as dashes)',
      incoming: { x_forwarded_for: '10.0.0.1', 'x-ok': '1' },
      out: ['x-ok', '1', ...FORWARDING],
    },
    {
      rule: 'HTTP/2 pseudo-headers are the request line, not headers',
      incoming: { ':method': 'GET', ':path': '/pets', ':authority': 'shop.example.com', ':scheme': 'https' },
      out: FORWARDING,
    },
    {
      rule: "the edge's own cookies stay at the edge; the site's pass byte for byte",
      incoming: { cookie: 'theme=dark; __Host-kennel_preview=abc;  lang=en' },
      out: ['cookie', 'theme=dark; lang=en', ...FORWARDING],
    },
    {
      rule: 'a Cookie of only edge cookies is not sent at all',
      incoming: { cookie: 'kennel_preview=abc' },
      out: FORWARDING,
    },
    {
      rule: 'a Cookie without edge cookies passes as sent',
      incoming: { cookie: 'a=1;b=2' },
      out: ['cookie', 'a=1;b=2', ...FORWARDING],
    },
    {
      rule: "the framing's Content-Length replaces the client's, before the forwarding headers",
      incoming: { 'content-length': '999', 'content-type': 'application/json' },
      contentLength: 12,
      out: ['content-type', 'application/json', 'content-length', '12', ...FORWARDING],
    },
    {
      rule: 'an IPv6 client is quoted and bracketed in Forwarded (RFC 7239 §6)',
      incoming: {},
      facts: { clientAddress: '2001:db8::1', host: 'shop.example.com', proto: 'http', requestId: 'r6' },
      out: [
        'x-forwarded-for',
        '2001:db8::1',
        'x-forwarded-host',
        'shop.example.com',
        'x-forwarded-proto',
        'http',
        'forwarded',
        'for="[2001:db8::1]";host=shop.example.com;proto=http',
        'x-request-id',
        'r6',
      ],
    },
  ];
  for (const row of rows) {
    it(row.rule, () => {
      assert.deepEqual(requestHeaders(row.incoming, row.facts ?? facts, row.contentLength), row.out);
    });
  }
});

describe("responseHeaders: what an origin's answer carries back", () => {
  const upstream = { origin: 'http://127.0.0.1:4010', basePath: '/v1' };
  const answer: AnswerFacts = { host: 'shop.example.com', proto: 'https', requestId: 'edge-id' };
  const rows: {
    rule: string;
    /** As undici hands them over: a repeated header as an array, whatever its name. */
    origin: Record<string, string | string[]>;
    facts?: AnswerFacts;
    platformDomain?: string;
    out: string[];
  }[] = [
    {
      rule: "the origin's headers pass in order, repeated ones line by line, and the edge's request id ends the list",
      origin: { 'content-type': 'application/json', vary: ['accept', 'origin'], etag: '"1"' },
      out: [
        'content-type',
        'application/json',
        'vary',
        'accept',
        'vary',
        'origin',
        'etag',
        '"1"',
        'x-request-id',
        'edge-id',
      ],
    },
    {
      rule: "hop-by-hop headers, those Connection lists, and the origin's request id are dropped",
      origin: {
        connection: 'x-internal',
        'x-internal': 'secret',
        'keep-alive': 'timeout=5',
        'transfer-encoding': 'chunked',
        'proxy-authenticate': 'Basic',
        trailer: 'x-sum',
        upgrade: 'h2c',
        'x-request-id': 'origin-id',
        'cache-control': 'no-store',
      },
      out: ['cache-control', 'no-store', 'x-request-id', 'edge-id'],
    },
    {
      rule: 'Location, Content-Location and Link move from the origin to the site (under /api)',
      origin: {
        location: 'http://127.0.0.1:4010/v1/pets/3',
        'content-location': '/v1/pets/3',
        link: '</v1/pets?page=2>; rel="next", <https://elsewhere.test/x>; rel="help"',
      },
      out: [
        'location',
        'https://shop.example.com/api/pets/3',
        'content-location',
        '/api/pets/3',
        'link',
        '</api/pets?page=2>; rel="next", <https://elsewhere.test/x>; rel="help"',
        'x-request-id',
        'edge-id',
      ],
    },
    {
      rule: "links move to the site's authority (its port) when the edge knows it",
      origin: { location: 'http://127.0.0.1:4010/v1/pets/3' },
      facts: { ...answer, proto: 'http', authority: 'shop.example.com:8080' },
      out: ['location', 'http://shop.example.com:8080/api/pets/3', 'x-request-id', 'edge-id'],
    },
    {
      rule: "Set-Cookie lines whose Domain covers the platform's are dropped (cookie tossing); others kept",
      origin: {
        'set-cookie': [
          'session=x; Domain=kennel.test; Path=/',
          'sid=y; domain=.Kennel.Test.',
          'a=1; Domain=shop.example.com',
          'b=2; Path=/',
          'c=3; Domain=',
        ],
      },
      platformDomain: 'app.kennel.test',
      out: [
        'set-cookie',
        'a=1; Domain=shop.example.com',
        'set-cookie',
        'b=2; Path=/',
        'x-request-id',
        'edge-id',
      ],
    },
    {
      rule: 'without a platform domain every Set-Cookie passes',
      origin: { 'set-cookie': ['session=x; Domain=kennel.test'] },
      out: ['set-cookie', 'session=x; Domain=kennel.test', 'x-request-id', 'edge-id'],
    },
    {
      rule: "the operation's lifecycle is added where the origin did not state it",
      origin: { 'content-type': 'application/json' },
      facts: {
        ...answer,
        lifecycle: {
          deprecation: '@1767225600',
          sunset: 'Fri, 01 Jan 2027 00:00:00 GMT',
          link: '</api/v2/pets>; rel="successor-version"',
        },
      },
      out: [
        'content-type',
        'application/json',
        'deprecation',
        '@1767225600',
        'sunset',
        'Fri, 01 Jan 2027 00:00:00 GMT',
        'link',
        '</api/v2/pets>; rel="successor-version"',
        'x-request-id',
        'edge-id',
      ],
    },
    {
      rule: "the origin's own lifecycle headers win over the document's",
      origin: {
        deprecation: '@1',
        sunset: 'Thu, 01 Jan 2026 00:00:00 GMT',
        link: '</v1/next>; rel=successor-version',
      },
      facts: {
        ...answer,
        lifecycle: {
          deprecation: '@2',
          sunset: 'Fri, 01 Jan 2027 00:00:00 GMT',
          link: '</api/v2>; rel="successor-version"',
        },
      },
      out: [
        'deprecation',
        '@1',
        'sunset',
        'Thu, 01 Jan 2026 00:00:00 GMT',
        'link',
        '</api/next>; rel=successor-version',
        'x-request-id',
        'edge-id',
      ],
    },
    {
      rule: "with a CORS policy the origin's CORS headers are replaced by the policy's; Vary adds a line",
      origin: {
        'access-control-allow-origin': '*',
        'access-control-expose-headers': 'x-secret',
        vary: 'accept',
      },
      facts: {
        ...answer,
        cors: { 'access-control-allow-origin': 'https://app.example.com', vary: 'Origin' },
      },
      out: [
        'vary',
        'accept',
        'access-control-allow-origin',
        'https://app.example.com',
        'vary',
        'Origin',
        'x-request-id',
        'edge-id',
      ],
    },
    {
      rule: "without a CORS policy the origin's CORS headers pass",
      origin: { 'access-control-allow-origin': '*' },
      out: ['access-control-allow-origin', '*', 'x-request-id', 'edge-id'],
    },
  ];
  for (const row of rows) {
    it(row.rule, () => {
      assert.deepEqual(
        responseHeaders(row.origin as IncomingHttpHeaders, row.facts ?? answer, upstream, row.platformDomain),
        row.out,
      );
    });
  }
});
