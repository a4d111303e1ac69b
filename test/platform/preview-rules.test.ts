import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { previewDeployIdOf, previewHost, previewLabel } from '../../src/platform/previews/index.ts';
import { deployProject, deploysToPrune, PREVIEWS_KEPT } from '../../src/platform/projects/deploys.ts';
import { readPublishedRoutes } from '../../src/platform/publishing/index.ts';
import { testDialects } from '../support/databases.ts';
import { startPlatformContext, type TestPlatform } from '../support/platform.ts';
import { seedTeamProject } from '../support/platform-config.ts';

const DOCUMENT = JSON.stringify({
  openapi: '3.0.3',
  info: { title: 'Old', version: '1' },
  paths: { '/things': { get: { responses: { '200': { description: 'OK' } } } } },
});

/** The rules of preview addresses and of which previews a project keeps, row by row. */
describe('preview addresses', () => {
  it('are <slug>--<deployId> under the platform domain, one DNS label', () => {
    assert.equal(previewHost('petstore', 42, 'kennel.example.com'), 'petstore--42.kennel.example.com');
    assert.equal(previewDeployIdOf('petstore--42.kennel.example.com', 'kennel.example.com'), 42);
  });

  it('cut a long slug so the label stays within 63 octets, never ending the cut in a hyphen', () => {
    const slug = `${'a'.repeat(55)}-${'b'.repeat(7)}`; // 63 characters
    const label = previewLabel(slug, 123456);
    assert.equal(label, `${'a'.repeat(55)}--123456`);
    assert.equal(label.length, 63);
    // Cut right after a hyphen: the hyphen goes too, so `--` stays the separator.
    assert.equal(previewLabel(`${'a'.repeat(54)}-${'b'.repeat(8)}`, 123456), `${'a'.repeat(54)}--123456`);
    assert.equal(previewLabel('petstore', 123456), 'petstore--123456');
    assert.equal(previewDeployIdOf(`${label}.platform.test`, 'platform.test'), 123456);
  });

  it('recognises only one label ending in --<digits> under the platform domain', () => {
    const rows: [string, number | undefined][] = [
      ['petstore--7.platform.test', 7],
      ['a--b--7.platform.test', 7],
      ['petstore.platform.test', undefined],
      ['petstore--07.platform.test', undefined],
      ['petstore--x.platform.test', undefined],
      ['--7.platform.test', undefined],
      ['x.petstore--7.platform.test', undefined],
      ['petstore--7.other.test', undefined],
      ['petstore--7.platform.test.evil.test', undefined],
    ];
    for (const [host, id] of rows) assert.equal(previewDeployIdOf(host, 'platform.test'), id, host);
  });
});

describe('retention with previews', () => {
  it(`keeps the live deploy, the latest retention deploys, and the latest ${PREVIEWS_KEPT} previews`, () => {
    // 30 deploys, ids 30 (newest) down to 1; every third one a preview; live is 2; retention 5.
    const ids = Array.from({ length: 30 }, (_, i) => 30 - i);
    const previews = new Set(ids.filter((id) => id % 3 === 0));
    const pruned = deploysToPrune(ids, 2, 5, previews);
    const kept = ids.filter((id) => !pruned.includes(id));
    // 30..26 by retention; 30, 27, …, 3 are the ten previews; 2 is live.
    assert.deepEqual(kept, [30, 29, 28, 27, 26, 24, 21, 18, 15, 12, 9, 6, 3, 2]);
    // An eleventh, older preview goes like any old deploy.
    assert.deepEqual(deploysToPrune([33, ...ids], 2, 5, new Set([33, ...previews])).includes(3), true);
  });

  it('prunes as before when told of no previews', () => {
    assert.deepEqual(deploysToPrune([5, 4, 3, 2, 1], 1, 2), [3, 2]);
  });
});

for (const dialect of testDialects()) {
  describe(`preview routes (${dialect})`, () => {
    let p: TestPlatform;
    before(async () => {
      p = await startPlatformContext(dialect);
    });
    after(async () => {
      await p?.close();
    });

    it("route a succeeded preview to its own deploy and origin; an older slug's default address wins", async () => {
      const { owner, team } = await seedTeamProject(p.ctx, {
        slug: 'old',
        name: 'Old',
        originUrl: 'https://live.example.com',
        document: false,
      });
      const live = await deployProject(p.ctx, owner, 'old', { document: DOCUMENT });
      const preview = await deployProject(p.ctx, owner, 'old', {
        document: DOCUMENT,
        originUrl: 'https://preview.example.com',
        preview: true,
      });
      const failed = await deployProject(p.ctx, owner, 'old', {
        document: '{"openapi":"3.0.3"}',
        preview: true,
      });
      assert.equal(failed.status, 'failed');
      // A project made before slugs refused `--`, whose slug is that preview's label.
      await p.ctx.db
        .insertInto('projects')
        .values({
          team_id: team.id,
          slug: `old--${preview.id}`,
          name: 'Older',
          origin_url: 'https://older.example.com',
          active_deploy_id: live.id,
          primary_domain: null,
          created_at: p.clock.now().toISOString(),
        })
        .execute();
      const { routes } = await readPublishedRoutes(p.ctx.db, 'platform.test', p.clock.now());
      const shadowed = routes.get(`old--${preview.id}.platform.test`);
      assert.equal(shadowed?.kind === 'project' && shadowed.slug, `old--${preview.id}`);
      assert.equal(shadowed?.kind === 'project' && shadowed.preview, undefined);
      await p.ctx.db.deleteFrom('projects').where('slug', '=', `old--${preview.id}`).execute();
      const { routes: after } = await readPublishedRoutes(p.ctx.db, 'platform.test', p.clock.now());
      assert.deepEqual(after.get(`old--${preview.id}.platform.test`), {
        kind: 'project',
        projectId: (after.get('old.platform.test') as { projectId: number }).projectId,
        slug: 'old',
        originUrl: 'https://preview.example.com',
        deployId: preview.id,
        preview: true,
      });
      assert.equal(
        after.get(`old--${failed.id}.platform.test`),
        undefined,
        'a failed preview has no address',
      );
      const liveRoute = after.get('old.platform.test');
      assert.equal(liveRoute?.kind === 'project' && liveRoute.deployId, live.id);
    });
  });
}
