import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { DocumentCache, type PublishedDeploy } from '../../src/edge/published-site.ts';
import { buildPlatformApp } from '../../src/main/platform-app.ts';
import { createToken } from '../../src/platform/accounts/credentials.ts';
import { referenceAssets } from '../../src/web/reference/index.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import { type PlainEdge, startPlainEdge } from '../support/edge.ts';
import { seedSites } from '../support/edge-site.ts';
import { requestAs } from '../support/http.ts';
import { startPlatformContext, type TestPlatform } from '../support/platform.ts';

/**
 * Issue 26: 15 redeploys of Stripe's document grew the edge's RSS from 451 to 783 MB (the
 * published-site cache kept every old deploy), and the first request after a big deploy rendered
 * it (seconds). The cache holds the live deploys only, within a byte bound, and the edge renders
 * a new live deploy as soon as it learns of it, before its first request.
 */

/** A document of about `operations` operations, each with its own schemas: Stripe's shape and size. */
function bigDocument(operations: number, title = 'Big'): string {
  const paths: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {};
  for (let i = 0; i < operations; i++) {
    const properties = Object.fromEntries(
      Array.from({ length: 30 }, (_, j) => [
        `field_${j}`,
        {
          type: 'string',
          description: `Field ${j} of resource ${i}: ${'text '.repeat(12)}`,
          maxLength: 5000,
        },
      ]),
    );
    schemas[`Resource${i}`] = { type: 'object', properties, required: ['field_0'] };
    paths[`/v1/resources_${i}/{id}`] = {
      get: {
        operationId: `get-resource-${i}`,
        summary: `Retrieve resource ${i}`,
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          '200': {
            description: 'The resource',
            content: { 'application/json': { schema: { $ref: `#/components/schemas/Resource${i}` } } },
          },
        },
      },
    };
  }
  return JSON.stringify({ openapi: '3.0.3', info: { title, version: '1' }, paths, components: { schemas } });
}

/** About 1.2 MB: big enough that a kept site shows; past a megabyte, so compressed at Brotli 5 (fast). */
const BIG = bigDocument(250);

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;
/** The bytes of buffers the main thread holds once garbage is collected (the sites' texts). */
const bufferBytes = () => {
  collectGarbage();
  return process.memoryUsage().arrayBuffers;
};

for (const dialect of testDialects()) {
  describe(`the published-site cache holds live deploys only (${dialect})`, () => {
    let p: TestPlatform;
    let app: ReturnType<typeof buildPlatformApp>;
    let edge: PlainEdge;
    let token: string;
    let projectId: number;

    before(async () => {
      p = await startPlatformContext(dialect, { PLATFORM_DOMAIN: 'localhost' });
      const big = { slug: 'big', name: 'Big', originUrl: 'http://127.0.0.1:9', document: false } as const;
      const { owner, projects } = await seedSites(p.ctx, [big], 'enterprise');
      projectId = projects[0]?.id as number;
      app = buildPlatformApp(p.ctx);
      await app.ready();
      token = (await createToken(p.ctx, owner, 'tests')).token;
      edge = await startPlainEdge(p);
    });
    after(() => closeAll(edge, app, p));

    async function deploy(document: string): Promise<number> {
      const answer = await app.inject({
        method: 'POST',
        url: '/api/v1/projects/big/deploys',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ document }),
      });
      assert.equal(answer.statusCode, 201, answer.body.slice(0, 500));
      const deployed = answer.json() as { id: number; status: string };
      assert.equal(deployed.status, 'succeeded');
      return deployed.id;
    }

    it('keeps one entry through 15 redeploys, the new deploy rendered before any request for it', async () => {
      const cache = new DocumentCache(p.ctx.db, referenceAssets());
      const route = (deployId: number): PublishedDeploy => ({
        projectId,
        deployId,
        originUrl: 'http://127.0.0.1:9',
      });
      let live = await deploy(BIG);
      assert.ok(await cache.get(route(live), 'big.localhost', 'https://big.localhost/api'));
      const oneSite = cache.bytes;
      assert.ok(oneSite > Buffer.byteLength(BIG), `${oneSite} bytes for one site`);
      const buffersBefore = bufferBytes();
      for (let i = 0; i < 15; i++) {
        live = await deploy(BIG);
        cache.deployed(projectId, () => route(live));
        // Rendered (or being rendered) before anyone asks for it.
        await new Promise((resolve) => setImmediate(resolve));
        assert.equal(cache.holds(live), true, `deploy ${live} is being rendered`);
        assert.ok(await cache.get(route(live), 'big.localhost', 'https://big.localhost/api'));
        assert.equal(cache.size, 1);
      }
      assert.ok(cache.bytes <= oneSite * 1.01, `${cache.bytes} bytes after 15 redeploys, ${oneSite} for one`);
      const grown = bufferBytes() - buffersBefore;
      console.log(
        `15 redeploys of a ${(Buffer.byteLength(BIG) / 1e6).toFixed(1)} MB document: one site ${(oneSite / 1e6).toFixed(1)} MB, buffers grew ${(grown / 1e6).toFixed(1)} MB`,
      );
      // Every old site kept would be 15 sites more.
      assert.ok(grown < 2 * oneSite, `buffers grew ${grown} bytes; one site is ${oneSite}`);
    });

    it('keeps within its byte bound, dropping the least recently used site', async () => {
      const live = await deploy(BIG);
      const cache = new DocumentCache(p.ctx.db, referenceAssets(), { maxBytes: 1 });
      const at = (host: string) =>
        cache.get(
          { projectId, deployId: live, originUrl: 'http://127.0.0.1:9' },
          host,
          `https://${host}/api`,
        );
      await at('a.localhost');
      await at('b.localhost');
      assert.equal(cache.size, 1);
      assert.ok(cache.bytes > 0);
    });

    it('through the edge: the first /openapi.json after a redeploy finds the new site rendered', async () => {
      const visit = async () => {
        const started = performance.now();
        const answer = await requestAs(edge.port, 'big.localhost', '/openapi.json', { hangMs: 30_000 });
        assert.equal(answer.status, 200);
        return {
          ms: performance.now() - started,
          title: (JSON.parse(answer.text) as { info: { title: string } }).info.title,
        };
      };
      // A bigger document, so that rendering it takes long enough to tell from a cached answer.
      await deploy(bigDocument(1000, 'Huge'));
      // Never visited on this edge: its default address was rendered when the deploy went live.
      const current = await coldRender();
      await new Promise((resolve) => setTimeout(resolve, Math.max(2000, 3 * current)));
      const never = await visit();
      console.log(
        `first /openapi.json of a site never visited: ${Math.round(never.ms)} ms (rendering takes ${Math.round(current)} ms)`,
      );
      assert.equal(never.title, 'Huge');
      assert.ok(never.ms < current / 3, `${Math.round(never.ms)} ms`);
      const next = bigDocument(1000, 'Huge again');
      await deploy(next);
      const cold = await coldRender();
      // The edge heard of the deploy and rendered it meanwhile.
      await new Promise((resolve) => setTimeout(resolve, Math.max(2000, 3 * cold)));
      const first = await visit();
      console.log(
        `first /openapi.json after a redeploy: ${Math.round(first.ms)} ms (rendering alone takes ${Math.round(cold)} ms)`,
      );
      assert.equal(first.title, 'Huge again');
      assert.ok(first.ms < cold / 3, `${Math.round(first.ms)} ms`);
    });

    /** How long rendering and compressing the document takes from nothing, on a cache of its own. */
    async function coldRender(): Promise<number> {
      const row = await p.ctx.db
        .selectFrom('projects')
        .select('active_deploy_id')
        .where('id', '=', projectId)
        .executeTakeFirstOrThrow();
      const cache = new DocumentCache(p.ctx.db, referenceAssets());
      const started = performance.now();
      await cache.get(
        { projectId, deployId: Number(row.active_deploy_id), originUrl: 'http://127.0.0.1:9' },
        'x.localhost',
        'https://x.localhost/api',
      );
      return performance.now() - started;
    }
  });
}
