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
