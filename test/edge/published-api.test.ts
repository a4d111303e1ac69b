import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { petstoreDocument } from '../../src/petstore/index.ts';
import { closeAll } from '../support/cleanup.ts';
import { type LoopbackServer, seedSites, startOrigin } from '../support/edge-site.ts';
import { requestAs } from '../support/http.ts';
import { seededOriginGuard } from '../support/origins.ts';
import { startPetstore, TEST_DEPRECATION, type TestPetstore } from '../support/petstore.ts';
import { loopbackFetch, walkPetstore } from '../support/published-walk.ts';
import { startTestNode, type TestNode } from '../support/test-node.ts';

/**
 * A published API as its clients meet it through the edge: a client built from the published
 * document (its `servers`, resolved against the document's own address) walks the Petstore over
 * HTTP and HTTPS, following the Location, next-page and successor links the origin sends; and a
 * project that is not the Petstore gets its document's deprecation lifecycle enforced by the edge.
 */
const WIDGETS_DOCUMENT = {
  openapi: '3.0.3',
  info: { title: 'Widgets', version: '1' },
  paths: {
    '/widgets/{widgetId}': {
      get: {
        deprecated: true,
        'x-sunset': '2027-01-01',
        'x-successor': '/v2/widgets/{widgetId}',
        parameters: [{ name: 'widgetId', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'A widget' } },
      },
    },
    '/gadgets': { get: { responses: { '200': { description: 'Gadgets' } } } },
  },
};

describe('published APIs through the edge', () => {
  let node: TestNode;
  let petstore: TestPetstore;
  let widgets: LoopbackServer;
  let widgetCalls: string[];
  let rootPem: string;
  let deployedAt: Date;

  before(async () => {
    // The client checks certificates against the real time: they are issued for now.
    node = await startTestNode('sqlite');
    node.clock.set(Date.now());
    rootPem = readFileSync(node.node.rootPemFile, 'utf8');
    petstore = await startPetstore('sqlite');
    widgetCalls = [];
    widgets = await startOrigin((req, res) => {
      widgetCalls.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    const { deploys } = await seedSites(
      node.ctx,
      [
        {
          slug: 'petstore',
          name: 'Petstore',
          originUrl: await petstore.listen(),
          document: JSON.stringify(petstoreDocument(TEST_DEPRECATION)),
        },
        {
          slug: 'widgets',
          name: 'Widgets',
          originUrl: widgets.url,
          document: JSON.stringify(WIDGETS_DOCUMENT),
        },
      ],
      'enterprise',
    );
    deployedAt = new Date(deploys[1]?.createdAt as string);
    // The projects' loopback origins are granted to their team (an admin's grant).
    await seededOriginGuard(node.ctx);
  });

  after(() => closeAll(node, widgets, petstore));

  for (const [scheme, http2] of [
    ['http', false],
    ['https', false],
    ['https', true],
  ] as const) {
    it(`a client built from the published document walks the Petstore over ${scheme}${http2 ? ' with HTTP/2' : ''}`, async () => {
      let sessions = 0;
      const counted = () => {
        sessions++;
      };
      node.node.edge.https?.on('session', counted);
      try {
        await walkPetstore({
          site: `${scheme}://petstore.platform.test:${scheme === 'http' ? node.httpPort : node.httpsPort}`,
          fetch: loopbackFetch(rootPem, { http2 }),
          adminKey: petstore.adminKey,
          tag: `${scheme}${http2 ? '-h2' : ''}`,
        });
      } finally {
        node.node.edge.https?.off('session', counted);
      }
      // HTTP/2 sessions only when the client offered h2.
      assert.equal(sessions > 0, http2);
    });
  }

  it("adds the document's lifecycle headers to a deprecated operation of any project", async () => {
    const answer = await requestAs(node.httpPort, 'widgets.platform.test', '/api/widgets/5');
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.deprecation, `@${Math.floor(deployedAt.getTime() / 1000)}`);
    assert.equal(answer.headers.sunset, 'Fri, 01 Jan 2027 00:00:00 GMT');
    assert.equal(answer.headers.link, '</api/v2/widgets/5>; rel="successor-version"');
    const plain = await requestAs(node.httpPort, 'widgets.platform.test', '/api/gadgets');
    assert.equal(plain.status, 200);
    assert.equal(plain.headers.deprecation, undefined);
    assert.equal(plain.headers.sunset, undefined);
  });

  it('answers 410 itself from the sunset on, without calling the origin', async () => {
    widgetCalls.length = 0;
    node.clock.set('2027-01-01T00:00:01Z');
    const gone = await requestAs(node.httpPort, 'widgets.platform.test', '/api/widgets/5');
    assert.equal(gone.status, 410);
    assert.deepEqual(JSON.parse(gone.text), {
      code: 'operation_sunset',
      message:
        'GET /widgets/5 was retired on Fri, 01 Jan 2027 00:00:00 GMT. Use its successor, named in the Link header.',
      status: 410,
    });
    assert.equal(gone.headers.link, '</api/v2/widgets/5>; rel="successor-version"');
    assert.deepEqual(widgetCalls, []);
    const other = await requestAs(node.httpPort, 'widgets.platform.test', '/api/gadgets');
    assert.equal(other.status, 200);
    assert.deepEqual(widgetCalls, ['/gadgets']);
  });
});
