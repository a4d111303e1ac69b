import assert from 'node:assert/strict';
import type { ClientHttp2Session, ServerHttp2Stream } from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { closeAll } from '../support/cleanup.ts';
import { startTestEdge, type TestEdge } from '../support/edge.ts';
import { type EdgeSite, type LoopbackServer, startEdgeSite, startOrigin } from '../support/edge-site.ts';
import { http2Request, http2Session } from '../support/http2-frames.ts';

const SITE = 'shop.platform.test';

/**
 * A closed h2 stream lets go of its listeners (src/edge/http2-server.ts, releaseOnClose), and with
 * them of the request it served: the edge's `close` hooks hold the exchange, the proxy's handler,
 * the headers and the answer. With them left on closed streams, about 3 KB per request outlived
 * the young generation's collections, each of those took 13–15 ms instead of about 1, and the h2
 * p99 was twice HTTP/1.1's (docs/decisions/http2.md; the figures in docs/benchmarks.md, "Edge
 * over HTTP/2"). Checked here on the streams themselves, for both ways the edge serves h2: once
 * closed, each holds nothing but a no-op `error` listener, and its answer was the origin's.
 */
describe('HTTP/2: a closed stream lets go of the request it served', () => {
  let site: EdgeSite;
  let origin: LoopbackServer;
  let edge: TestEdge;
  let client: ClientHttp2Session;
  const streams: ServerHttp2Stream[] = [];
  const received: string[] = [];

  before(async () => {
    origin = await startOrigin((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk;
      });
      req.on('end', () => {
        received.push(`${req.method} ${req.url} ${body}`);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      });
    });
    site = await startEdgeSite('sqlite', { now: true, projects: [{ slug: 'shop', originUrl: origin.url }] });
    edge = await startTestEdge(site.p, { certificateFor: SITE });
    edge.https.on('stream', (stream: ServerHttp2Stream) => streams.push(stream));
    client = await http2Session(edge.httpsPort, SITE);
  });

  after(async () => {
    client?.destroy();
    await closeAll(edge, origin, site);
  });

  /** Until every stream the edge took has closed (its `close` comes a turn after the answer). */
  async function allClosed(): Promise<void> {
    const deadline = performance.now() + 3_000;
    while (streams.some((stream) => !stream.closed || !stream.destroyed) && performance.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setImmediate(resolve));
  }

  for (const [how, headers, body] of [
    ['a bodiless GET (the direct path)', { ':method': 'GET', ':path': '/api/pets/1' }, undefined],
    [
      "a POST with a body (node:http2's compatibility objects)",
      { ':method': 'POST', ':path': '/api/pets', 'content-type': 'application/json' },
      '{"name":"Rex"}',
    ],
  ] as const) {
    it(`${how}: once closed, a stream holds only a no-op error listener`, async () => {
      streams.length = 0;
      received.length = 0;
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => http2Request(client, { ...headers, ':authority': SITE }, body)),
      );
      assert.deepEqual(
        answers.map((answer) => [answer.status, answer.text]),
        Array.from({ length: 8 }, () => [200, '{"ok":true}']),
      );
      assert.equal(received.length, 8);
      assert.equal(
        received[0],
        `${headers[':method']} ${headers[':path'].slice('/api'.length)} ${body ?? ''}`,
      );
      await allClosed();
      assert.equal(streams.length, 8);
      for (const stream of streams) {
        assert.deepEqual(stream.eventNames(), ['error']);
        assert.equal(stream.listenerCount('error'), 1);
        // A late error (none is emitted after close) could not throw: its listener takes it.
        assert.doesNotThrow(() => stream.emit('error', new Error('late')));
      }
    });
  }
});
