import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RoutingTable } from '../../src/edge/index.ts';
import { testDialects } from '../support/databases.ts';
import { seedProject, seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';

/**
 * The routing table never answers from a table read before the latest change: a lookup that
 * arrives while a reload is under way (started by an earlier request) waits for a table read
 * after the change, instead of the old one (issue 17: a removed host answered 200 once, 5 ms
 * after its removal, on another node).
 */
for (const dialect of testDialects()) {
  describe(`the routing table after a change (${dialect})`, () => {
    let p: TestPlatform;
    let table: RoutingTable;

    before(async () => {
      p = await startPlatformContext(dialect);
      const { owner, team } = await seedTeam(p.ctx);
      await seedProject(p.ctx, owner, {
        teamId: team.id,
        slug: 'shop',
        name: 'Shop',
        originUrl: 'http://192.0.2.1',
        title: 'T',
      });
      table = new RoutingTable(p.ctx.db, 'platform.test', p.clock);
    });

    after(async () => {
      await p?.close();
    });

    it('answers lookups during a reload with the table read after the change, never the old one', async () => {
      const first = await table.lookup('shop.platform.test');
      assert.equal(first?.kind, 'project');
      // The project stops being published; the change is reported...
      await p.ctx.db
        .updateTable('projects')
        .set({ active_deploy_id: null })
        .where('slug', '=', 'shop')
        .execute();
      table.invalidate();
      // ...a first request starts the reload, and a second arrives while it runs.
      const during = table.lookup('shop.platform.test');
      const next = table.lookup('shop.platform.test');
      assert.ok(next instanceof Promise, 'the second lookup waits for the reload');
      assert.equal(await during, undefined);
      assert.equal(await next, undefined);
      // Once fresh, answered at once again.
      assert.equal(table.lookup('shop.platform.test'), undefined);
    });
  });
}
