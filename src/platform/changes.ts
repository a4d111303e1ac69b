/**
 * What changed in the control plane, told to whoever serves traffic from it (the edge) right
 * after the change commits, so the next request already sees it. Several nodes will relay these
 * through PostgreSQL notifications; in one process the feed is enough.
 */
export interface Change {
  /**
   * `everything`: changes may have been missed (the change relay lost its PostgreSQL connection
   * and reconnected), so whoever caches what serves traffic reloads all of it. Its projectId is 0.
   */
  readonly kind:
    | 'domains'
    | 'projects'
    | 'deploys'
    | 'redirects'
    | 'certificates'
    /** A platform admin granted or revoked a private origin (projectId 0): routes change with it. */
    | 'origin_grants'
    | 'everything';
  readonly projectId: number;
}

export class ChangeFeed {
  readonly #listeners = new Set<(change: Change) => void>();

  publish(change: Change): void {
    for (const listener of this.#listeners) listener(change);
  }

  subscribe(listener: (change: Change) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
