import { type OriginGuard, originGuard } from '../../src/edge/index.ts';
import type { PlatformContext } from '../../src/platform/context.ts';

/**
 * The origin guard of a test edge. Tests run their origins on loopback, which the address policy
 * refuses unless listed, so the guard allows exactly what an operator would list in
 * KENNEL_ORIGIN_ALLOWLIST: the configured allowlist plus the origins of the projects seeded
 * before the edge starts (and `extra`). Anything else on loopback stays refused.
 */
export async function seededOriginGuard(
  ctx: PlatformContext,
  extra: readonly string[] = [],
): Promise<OriginGuard> {
  const rows = await ctx.db.selectFrom('projects').select('origin_url').execute();
  return originGuard({
    allowlist: [
      ...ctx.config.originAllowlist,
      ...rows.map((row) => new URL(row.origin_url).origin),
      ...extra,
    ],
  });
}
