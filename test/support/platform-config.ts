import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Actor, PlatformContext } from '../../src/platform/context.ts';
import { applyDomainConfig, exportDomainConfig } from '../../src/platform/domains/apply-domain-config.ts';
import { type ConfigContext, parseDomainConfig } from '../../src/platform/domains/domain-config.ts';
import { seedProject, seedTeam } from './platform.ts';

/** A YAML domain configuration that must be refused: what it shows, the file, where, and why. */
export type RefusedConfig = [name: string, yaml: string, line: number, column: number, message: RegExp];

/**
 * One test per row: parsing the row's YAML in `context` fails, its first problem at the row's
 * line and column with a message matching the row's.
 */
export function itRefusesEach(rows: readonly RefusedConfig[], context: ConfigContext) {
  for (const [name, yaml, line, column, message] of rows) {
    it(`refuses ${name} at line ${line}, column ${column}`, () => {
      const parsed = parseDomainConfig(yaml, context);
      assert.equal(parsed.ok, false);
      if (parsed.ok) return;
      const first = parsed.problems[0];
      assert.deepEqual([first?.line, first?.column], [line, column], JSON.stringify(parsed.problems));
      assert.match(first?.message ?? '', message);
    });
  }
}

/**
 * seedTeam, and the owner's project in the team (seedProject: `shop`, "Shop", on
 * http://127.0.0.1:9 unless given; deployed as seedProject does, `document: false` for none): the
 * accounts and the project.
 */
export async function seedTeamProject(
  ctx: PlatformContext,
  project: Partial<Omit<Parameters<typeof seedProject>[2], 'teamId'>> = {},
): Promise<{ admin: Actor; owner: Actor; team: { id: number }; project: { id: number } }> {
  const seeded = await seedTeam(ctx);
  const made = await seedProject(ctx, seeded.owner, {
    slug: 'shop',
    name: 'Shop',
    originUrl: 'http://127.0.0.1:9',
    ...project,
    teamId: seeded.team.id,
  });
  return { ...seeded, project: made.project };
}

/**
 * Applies `yaml` to `slug`'s domain configuration, which must be refused (the error passes
 * `check`), and checks the exported configuration is what it was before.
 */
export async function expectRefusedUnchanged(
  ctx: PlatformContext,
  owner: Actor,
  slug: string,
  yaml: string,
  check: (error: Error & { code?: string; status?: number }) => boolean,
) {
  const before = await exportDomainConfig(ctx, owner, slug);
  await assert.rejects(applyDomainConfig(ctx, owner, slug, yaml), check);
  assert.equal(await exportDomainConfig(ctx, owner, slug), before);
}
