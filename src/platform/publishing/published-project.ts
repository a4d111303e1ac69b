import type { PlatformDb } from '../context.ts';

/** What a published site says of its project beyond its route: its slug and when it was made. */
export async function readPublishedProject(
  db: PlatformDb,
  projectId: number,
): Promise<{ readonly slug: string; readonly createdAt: string } | undefined> {
  const row = await db
    .selectFrom('projects')
    .select(['slug', 'created_at'])
    .where('id', '=', projectId)
    .executeTakeFirst();
  return row && { slug: row.slug, createdAt: row.created_at };
}
