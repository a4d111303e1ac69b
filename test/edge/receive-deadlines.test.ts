import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { closeAll } from '../support/cleanup.ts';
import { type HttpEdge, startHttpEdge } from '../support/edge.ts';
import { type EdgeSite, startEdgeSite } from '../support/edge-site.ts';

/**
 * The edge's own listeners answer what node:http could not read with the Error body: a body that
 * stalls past RECEIVE_TIMEOUT (408), headers over 16 KB (431), broken framing (400). Before,
 * node:http wrote its bare 408/400 (or, with Fastify's 0 default, nothing for 400 s).
 */
describe('the edge listeners: deadlines and unreadable requests in the Error body', () => {
  let site: EdgeSite;
  let edge: HttpEdge;

  before(async () => {
    site = await startEdgeSite('sqlite', {
      env: { HEADERS_TIMEOUT: '300ms', RECEIVE_TIMEOUT: '500ms' },
      projects: [{ slug: 'shop', originUrl: 'http://127.0.0.1:9', title: 'T' }],
    });
    edge = await startHttpEdge(site.p.ctx);
  });

  after(() => closeAll(edge, site));

  function send(bytes: string): Promise<{ answer: string; ms: number }> {
    return new Promise((resolve) => {
      const started = performance.now();
      const socket = connect(edge.port, '127.0.0.1');
      let answer = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => {
        answer += chunk;
      });
      socket.on('error', () => {});
      socket.on('close', () => resolve({ answer, ms: performance.now() - started }));
      socket.write(bytes);
      setTimeout(() => socket.destroy(), 5_000);
    });
  }

  const bodyOf = (answer: string) =>
    JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { code: string; status: number };

  it('answers a body that stalls with 408 receive_timeout and closes the connection', async () => {
    const { answer, ms } = await send(
      'POST /api/things HTTP/1.1\r\nHost: shop.platform.test\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":"st',
    );
    assert.match(answer, /^HTTP\/1\.1 408 /);
    assert.equal(bodyOf(answer).code, 'receive_timeout');
    assert.ok(ms < 3_000, `closed after ${Math.round(ms)} ms`);
  });

  it('answers headers that never end with 408, headers over 16 KB with 431, broken framing with 400', async () => {
    const slow = await send('GET /api/x HTTP/1.1\r\nHost: shop.platform.test\r\nX-A: b');
    assert.match(slow.answer, /^HTTP\/1\.1 408 /);
    assert.equal(bodyOf(slow.answer).code, 'receive_timeout');
    const big = await send(
      `GET /api/x HTTP/1.1\r\nHost: shop.platform.test\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    assert.match(big.answer, /^HTTP\/1\.1 431 /);
    assert.equal(bodyOf(big.answer).code, 'headers_too_large');
    const broken = await send(
      'POST /api/x HTTP/1.1\r\nHost: shop.platform.test\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab',
    );
    assert.match(broken.answer, /^HTTP\/1\.1 400 /);
    assert.equal(bodyOf(broken.answer).code, 'malformed_request');
  });
});
