import type { PlatformDb } from '../context.ts';

/** A deploy's OpenAPI document as stored (JSON text) and when it was made; undefined when none. */
export async function readDeployDocument(
  db: PlatformDb,
  deployId: number,
): Promise<{ readonly document: string; readonly createdAt: string } | undefined> {
  const row = await db
    .selectFrom('deploys')
    .select(['document', 'created_at'])
    .where('id', '=', deployId)
    .executeTakeFirst();
  return row?.document ? { document: row.document, createdAt: row.created_at } : undefined;
}
