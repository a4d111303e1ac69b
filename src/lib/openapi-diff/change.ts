/** What the change engine reports (./index.ts re-exports these; see docs/changes.md). */

export type ChangeLevel = 'breaking' | 'warning' | 'info';

export interface Change {
  /** Rule id, stable, kebab-case, e.g. 'api-removed-without-deprecation'. */
  id: string;
  level: ChangeLevel;
  /** 'GET /pets/{petId}' when the change belongs to one operation. */
  operation?: string;
  /** JSON pointer into the revision (into the base for removals). */
  location: string;
  /** A sentence a person understands. */
  message: string;
}
