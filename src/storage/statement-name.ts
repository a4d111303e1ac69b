import { createHash } from 'node:crypto';

/**
 * The name of a PostgreSQL prepared statement for this text: the same text gets the same name on
 * every connection and in every process. Only compiled-once statements are named, so the texts,
 * and the statements each connection keeps, are bounded.
 */
export function statementName(sql: string): string {
  return `k_${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`;
}
