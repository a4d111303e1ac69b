import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { deployProject } from '../../src/platform/projects/deploys.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import { type HttpEdge, startHttpEdge } from '../support/edge.ts';
import { requestAs } from '../support/http.ts';
import { seededOriginGuard } from '../support/origins.ts';
import { seedProject, seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';

/**
 * What a tenant's project cannot reach or plant through the edge: an origin on the operator's
 * loopback (a metrics or backup listener), however the address is spelled, is refused before any
 * connection is made; an origin's Set-Cookie for the platform's own domain never reaches the
 * browser (cookie tossing onto the dashboard).
 */
describe('the edge keeps tenants off the operator and off the dashboard', () => {
  let p: TestPlatform;
  let operator: Server;
  let operatorConnections = 0;
  let shop: Server;
  let edge: HttpEdge;
  let edgePort: number;
  const listen = (server: Server) =>
    new Promise<number>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
    );

  before(async () => {
    // Stands for the operator's metrics listener: it must never be asked.
    operator = createServer((_req, res) => res.end('kennel_secret_metric 1\n'));
    operator.on('connection', () => {
      operatorConnections++;
    });
    const operatorPort = await listen(operator);
    shop = createServer((_req, res) => {
      res.setHeader('set-cookie', [
        'session=attacker; Domain=platform.test; Path=/; HttpOnly',
        'tossed=1; path=/; domain=.Platform.Test.',
        'host_only=1; Path=/',
        'own=1; Domain=shop.platform.test',
      ]);
      res.end('{}');
    });
    const shopPort = await listen(shop);
    p = await startPlatformContext('sqlite');
    const { owner, team } = await seedTeam(p.ctx);
    const document = JSON.stringify({ openapi: '3.0.3', info: { title: 'T', version: '1' }, paths: {} });
    await createProject(p.ctx, owner, {
      teamId: team.id,
      slug: 'shop',
      name: 'Shop',
      originUrl: `http://127.0.0.1:${shopPort}`,
    });
    await deployProject(p.ctx, owner, 'shop', { document });
    // The edge's guard is built from what the operator allowed (here: the shop's origin).
    const guard = await seededOriginGuard(p.ctx);
    for (const [slug, originUrl] of [
      ['metrics', `http://127.0.0.1:${operatorPort}`],
      ['mapped', `http://[::ffff:127.0.0.1]:${operatorPort}`],
      ['decimal', `http://2130706433:${operatorPort}`],
      ['named', `http://localhost:${operatorPort}`],
      ['cloud', 'http://169.254.169.254'],
    ] as const) {
      await seedProject(p.ctx, owner, { teamId: team.id, slug, name: slug, originUrl, document });
    }
    edge = await startHttpEdge(p.ctx, { guard, connectTimeoutMs: 500, responseTimeoutMs: 2000 });
    edgePort = edge.port;
  });

  after(async () => {
    await edge?.close();
    operator?.close();
    shop?.close();
    await p?.close();
  });

  for (const slug of ['metrics', 'mapped', 'decimal', 'named', 'cloud']) {
    it(`refuses an origin on the operator's network (${slug}) with 502 origin_forbidden, connecting nowhere`, async () => {
      const answer = await requestAs(edgePort, `${slug}.platform.test`, '/api/metrics');
      assert.equal(answer.status, 502);
      assert.equal((JSON.parse(answer.text) as { code: string }).code, 'origin_forbidden');
      assert.doesNotMatch(answer.text, /kennel_secret_metric/);
      assert.equal(operatorConnections, 0);
    });
  }

  it("drops an origin's cookies for the platform's own domain, keeps the site's own", async () => {
    const answer = await requestAs(edgePort, 'shop.platform.test', '/api/anything');
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.headers['set-cookie'], [
      'host_only=1; Path=/',
      'own=1; Domain=shop.platform.test',
    ]);
  });
});
