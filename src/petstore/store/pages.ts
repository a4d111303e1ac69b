import { type SelectQueryBuilder, type StringReference, sql } from 'kysely';
import { petstoreErrors } from '../errors.ts';

/** A page of a list, with the cursor of the next page when there is one. */
export interface Page<T> {
  items: T[];
  next: string | null;
}

/** Cursors are opaque to clients: base64url of the last id of the previous page. */
export function encodeCursor(lastId: number): string {
  return Buffer.from(`after:${lastId}`).toString('base64url');
}

/** The id a page starts after; a cursor the server did not make is refused. */
export function decodeCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  const match = /^after:(\d{1,16})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) {
    throw petstoreErrors.error(
      'validation_failed',
      'Query parameter cursor is not valid. Use the URL from the Link header (rel="next") as it is.',
    );
  }
  return Number(match[1]);
}

export function pageOf<T extends object>(rows: T[], limit: number, idOf: (row: T) => number): Page<T> {
  if (rows.length <= limit) return { items: rows, next: null };
  const items = rows.slice(0, limit);
  return { items, next: encodeCursor(idOf(items[items.length - 1] as T)) };
}

/**
 * One page of a list in the order of its integer `key` column: the rows of `query` whose key comes
 * after the cursor's, one more than the page read to learn whether a next page exists (`keyOf`
 * reads the key from a row for the next cursor), each made an item by `toItem`.
 */
export async function readPage<DB, TB extends keyof DB, Row extends object, T>(
  query: SelectQueryBuilder<DB, TB, Row>,
  key: StringReference<DB, TB>,
  keyOf: (row: Row) => number,
  page: { readonly limit: number; readonly cursor?: string | undefined },
  toItem: (row: Row) => T,
): Promise<Page<T>> {
  const after = decodeCursor(page.cursor);
  const rows = await query
    .where(sql.ref<number>(key), '>', after)
    .orderBy(sql.ref(key))
    .limit(page.limit + 1)
    .execute();
  const { items, next } = pageOf(rows, page.limit, keyOf);
  return { items: items.map(toItem), next };
}
