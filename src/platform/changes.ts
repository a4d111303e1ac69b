/**
 * What changed in the control plane, told to whoever serves traffic from it (the edge) right
 * after the change commits, so the next request already sees it. Several nodes will relay these
 * through PostgreSQL notifications; in one process the feed is enough.
 */
export interface Change {
  readonly kind: 'domains' | 'projects' | 'deploys' | 'redirects' | 'certificates';
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
