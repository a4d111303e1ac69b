import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type CliTeam, show, startCliTeam } from '../support/cli-setup.ts';
import { testDialects } from '../support/databases.ts';

const get = (description: string) => ({ get: { responses: { '200': { description } } } });
const doc = (paths: Record<string, unknown>) =>
  JSON.stringify({ openapi: '3.0.3', info: { title: 'Shop', version: '1.0.0' }, paths });
const V1 = doc({ '/pets': get('pets'), '/pets/{petId}': get('a pet') });
/** Removes GET /pets/{petId} (breaking) and adds GET /toys (so going back to V1 breaks too). */
const V2 = doc({ '/pets': get('pets'), '/toys': get('toys') });
const INVALID = JSON.stringify({ openapi: '3.0.3', info: { title: 'x' }, paths: {} });

for (const dialect of testDialects()) {
  describe(`kennel deploy --dry-run / --allow-breaking / --preview and kennel deploys promote (${dialect})`, () => {
    let team: CliTeam;
    let kennel: CliTeam['kennel'];
    let file: CliTeam['file'];
    let firstId = 0;

    before(async () => {
      team = await startCliTeam(dialect, {
        projects: [{ slug: 'shop', name: 'Shop' }],
        prefix: 'kennel-deploy-gate-',
      });
      ({ kennel, file } = team);
    });
    after(() => team?.close());

    it('deploys the first document as #1 and prints that nothing changed', async () => {
      const first = await kennel('deploy', 'shop', file('v1.json', V1));
      assert.equal(first.code, 0, show(first));
      const id = /^Deploy #1 \(deploy (\d+)\) of shop succeeded \(json\); it is now live/m.exec(
        first.stdout,
      )?.[1];
      assert.ok(id, show(first));
      firstId = Number(id);
      assert.match(first.stdout, /^No changes to the API\.$/m);
    });

    it('--dry-run prints the changes grouped by level and exits 1 when they break callers, 0 when not, storing nothing', async () => {
      const breaking = await kennel('deploy', 'shop', file('v2.json', V2), '--dry-run');
      assert.equal(breaking.code, 1, show(breaking));
      assert.match(breaking.stdout, /would be refused: it breaks callers of shop's live API/);
      assert.match(
        breaking.stdout,
        /^Breaking \(1\)\n {2}GET \/pets\/\{petId\}\n {4}- .+\n {6}[a-z-]+ at \/\S+$/m,
      );
      const same = await kennel('deploy', 'shop', file('v1.json', V1), '--dry-run', '--json');
      assert.equal(same.code, 0, show(same));
      assert.deepEqual(JSON.parse(same.stdout), {
        valid: true,
        problems: [],
        problemDetails: [],
        changes: [],
        breaking: false,
      });
      const invalid = await kennel('deploy', 'shop', file('bad.json', INVALID), '--dry-run');
      assert.equal(invalid.code, 1, show(invalid));
      assert.match(invalid.stdout, /would fail to deploy to shop\. Problems:\n {2}- .*version/);
      const usage = await kennel('deploy', 'shop', file('v2.json', V2), '--dry-run', '--preview');
      assert.equal(usage.code, 2, show(usage));
      const history = await kennel('projects', 'deploys', 'shop', '--json');
      assert.equal(JSON.parse(history.stdout).length, 1, 'a dry run stores nothing');
    });

    it('refuses a breaking deploy (exit 1), printing what breaks and how to force it; --allow-breaking deploys it', async () => {
      const path = file('v2.json', V2);
      const refused = await kennel('deploy', 'shop', path);
      assert.equal(refused.code, 1, show(refused));
      assert.equal(refused.stdout, '');
      assert.match(refused.stderr, /^Breaking \(1\)\n {2}GET \/pets\/\{petId\}\n {4}- /m);
      assert.match(
        refused.stderr,
        /^error: This deploy would break callers of the live API .*\(breaking_changes\)$/m,
      );
      assert.ok(refused.stderr.includes(`Next: kennel deploy shop ${path} --allow-breaking`), show(refused));
      const asJson = await kennel('deploy', 'shop', path, '--json');
      assert.equal(asJson.code, 1);
      const body = JSON.parse(asJson.stdout) as { code: string; changes: { level: string }[] };
      assert.equal(body.code, 'breaking_changes');
      assert.ok(body.changes.some((c) => c.level === 'breaking'));

      const forced = await kennel('deploy', 'shop', path, '--allow-breaking');
      assert.equal(forced.code, 0, show(forced));
      assert.match(forced.stdout, /^Deploy #2 \(deploy \d+\) of shop succeeded \(json\); it is now live/m);
      assert.match(forced.stdout, /^Breaking \(1\)$/m);
      const failed = await kennel('deploy', 'shop', file('bad.json', INVALID));
      assert.equal(failed.code, 1, show(failed));
      assert.match(failed.stdout, /^Deploy #3 \(deploy \d+\) of shop failed; the live deploy is unchanged/m);
    });

    it('--preview leaves the live site; deploys promote asks for --allow-breaking, then makes deploy #1 live again', async () => {
      const preview = await kennel('deploy', 'shop', file('v1.json', V1), '--preview');
      assert.equal(preview.code, 0, show(preview));
      assert.match(
        preview.stdout,
        /^Preview #4 \(deploy \d+\) of shop succeeded \(json\); the live site is unchanged/m,
      );

      const refused = await kennel('deploys', 'promote', 'shop', String(firstId));
      assert.equal(refused.code, 1, show(refused));
      assert.match(
        refused.stderr,
        /^error: Promoting deploy #1 would break callers .*\(breaking_changes\)$/m,
      );
      assert.ok(
        refused.stderr.includes(`Next: kennel deploys promote shop ${firstId} --allow-breaking`),
        show(refused),
      );

      const promoted = await kennel('deploys', 'promote', 'shop', String(firstId), '--allow-breaking');
      assert.equal(promoted.code, 0, show(promoted));
      assert.match(
        promoted.stdout,
        new RegExp(`^Deploy #1 \\(deploy ${firstId}\\) of shop is live again`, 'm'),
      );
      const history = JSON.parse((await kennel('projects', 'deploys', 'shop', '--json')).stdout) as {
        number: number;
        active: boolean;
        preview: boolean;
        createdBy: string;
      }[];
      assert.deepEqual(
        history.map((d) => [d.number, d.active, d.preview, d.createdBy]),
        [
          [4, false, true, 'owner@x.test'],
          [3, false, false, 'owner@x.test'],
          [2, false, false, 'owner@x.test'],
          [1, true, false, 'owner@x.test'],
        ],
      );
      const table = await kennel('projects', 'deploys', 'shop');
      assert.match(table.stdout, /^#\s+ID\s+Status\s+Live\s+Changes\s+By\s+/m);
      assert.match(table.stdout, /^1\s+\d+\s+succeeded\s+yes\s+0\s+owner@x\.test/m);

      const again = await kennel('deploys', 'promote', 'shop', String(firstId));
      assert.equal(again.code, 1, show(again));
      assert.match(again.stderr, /\(deploy_already_live\)/);
      const usage = await kennel('deploys', 'promote', 'shop', 'first');
      assert.equal(usage.code, 2, show(usage));
    });
  });
}
