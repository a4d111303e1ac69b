import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RoutingTable } from '../../src/edge/index.ts';
import { testDialects } from '../support/databases.ts';
import { type EdgeSite, startEdgeSite } from '../support/edge-site.ts';

/**
 * The routing table never answers from a table read before the latest change: a lookup that
 * arrives while a reload is under way (started by an earlier request) waits for a table read
 * after the change, instead of the old one (issue 17: a removed host answered 200 once, 5 ms
 * after its removal, on another node).
 */
for (const dialect of testDialects()) {
  describe(`the routing table after a change (${dialect})`, () => {
    let site: EdgeSite;
    let table: RoutingTable;

    before(async () => {
      site = await startEdgeSite(dialect, {
        projects: [{ slug: 'shop', originUrl: 'http://192.0.2.1', title: 'T' }],
      });
      table = new RoutingTable(site.p.ctx.db, 'platform.test', site.p.clock);
    });

    after(() => site?.close());

    it('answers lookups during a reload with the table read after the change, never the old one', async () => {
      const first = await table.lookup('shop.platform.test');
      assert.equal(first?.kind, 'project');
      // The project stops being published; the change is reported...
      await site.p.ctx.db
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
