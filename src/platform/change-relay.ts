import pg from 'pg';
import type { Change, ChangeFeed } from './changes.ts';

/**
 * Carries a node's changes to every other node through PostgreSQL LISTEN/NOTIFY, so their edges
 * forget a removed domain or load a new certificate within moments. Each notification names its
 * node, so a node does not replay its own. SQLite needs none: one process owns the file.
 */
export interface ChangeRelay {
  close(): Promise<void>;
}

export async function startChangeRelay(options: {
  url: string;
  /** Separates installations sharing one database server (tests use their schema). */
  channel: string;
  nodeId: string;
  feed: ChangeFeed;
  onError: (error: unknown) => void;
}): Promise<ChangeRelay> {
  const { feed, nodeId, channel } = options;
  const listener = new pg.Client({ connectionString: options.url });
  const notifier = new pg.Pool({ connectionString: options.url, max: 2 });
  notifier.on('error', options.onError);
  listener.on('error', options.onError);
  await listener.connect();
  let relaying = false;
  listener.on('notification', (message) => {
    if (message.channel !== channel || !message.payload) return;
    const { node, change } = JSON.parse(message.payload) as { node: string; change: Change };
    if (node === nodeId) return;
    relaying = true;
    try {
      feed.publish(change);
    } finally {
      relaying = false;
    }
  });
  await listener.query(`LISTEN "${channel.replaceAll('"', '')}"`);
  const unsubscribe = feed.subscribe((change) => {
    if (relaying) return; // came from another node: do not send it back
    notifier
      .query('SELECT pg_notify($1, $2)', [channel, JSON.stringify({ node: nodeId, change })])
      .catch(options.onError);
  });
  return {
    async close() {
      unsubscribe();
      await listener.end();
      await notifier.end();
    },
  };
}
