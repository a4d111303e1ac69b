import pg from 'pg';
import { backoffDelay } from '../lib/backoff.ts';
import type { Change, ChangeFeed } from './changes.ts';

/**
 * Carries a node's changes to every other node through PostgreSQL LISTEN/NOTIFY, so their edges
 * forget a removed domain or load a new certificate within moments. Each notification names its
 * node, so a node does not replay its own. SQLite needs none: one process owns the file.
 *
 * The listening session can be lost (a PostgreSQL restart, pg_terminate_backend, the network).
 * Notifications sent meanwhile are lost with it, so the relay reconnects with back-off and then
 * publishes an `everything` change on the local feed: the edge reloads its routing table and
 * certificates and serves nothing removed while it was not listening.
 */
export interface ChangeRelay {
  close(): Promise<void>;
}

export interface ChangeRelayOptions {
  url: string;
  /** Separates installations sharing one database server (tests use their schema). */
  channel: string;
  nodeId: string;
  feed: ChangeFeed;
  onError: (error: unknown) => void;
  /** Told each time the listening session is back after a loss (logs, tests). */
  onReconnect?: (attempts: number) => void;
  /** The wait before each reconnection attempt: base, doubled each failure, capped at max. */
  backoff?: { baseMs: number; maxMs: number };
  /**
   * How often the listening session is probed, and how long a probe (or connecting, or LISTEN)
   * may take. A session whose network path died silently (no reset reaches this node) would
   * otherwise look alive for as long as TCP retransmits, hearing nothing.
   */
  heartbeat?: { everyMs: number; timeoutMs: number };
}

const DEFAULT_BACKOFF = { baseMs: 200, maxMs: 10_000 };
const DEFAULT_HEARTBEAT = { everyMs: 15_000, timeoutMs: 5_000 };

export async function startChangeRelay(options: ChangeRelayOptions): Promise<ChangeRelay> {
  const { feed, nodeId, channel } = options;
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  const heartbeat = options.heartbeat ?? DEFAULT_HEARTBEAT;
  const notifier = new pg.Pool({
    connectionString: options.url,
    max: 2,
    fallback_application_name: 'kennel-change-relay',
    connectionTimeoutMillis: 5_000,
  });
  notifier.on('error', options.onError);
  // A notifier client cut while it sends: the send fails (reported below), the pool drops it.
  notifier.on('connect', (client) => client.on('error', () => {}));
  let relaying = false;
  let closed = false;
  let listener: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let failures = 0;
  /** How to give up on a session from outside (a failed probe): as if it had ended. */
  const lose = new WeakMap<pg.Client, (error: unknown) => void>();

  const relay = (change: Change) => {
    relaying = true;
    try {
      feed.publish(change);
    } finally {
      relaying = false;
    }
  };

  const listen = async (): Promise<pg.Client> => {
    const client = new pg.Client({
      connectionString: options.url,
      fallback_application_name: 'kennel-change-relay',
      connectionTimeoutMillis: heartbeat.timeoutMs,
      // LISTEN and the probes; a probe that times out ends the session (see below).
      query_timeout: heartbeat.timeoutMs,
      keepAlive: true,
    });
    let lost = false;
    const onLost = (error?: unknown) => {
      if (lost) return;
      lost = true;
      if (error !== undefined) options.onError(error);
      if (listener === client) {
        listener = undefined;
        schedule();
      }
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    lose.set(client, onLost);
    client.on('notification', (message) => {
      if (message.channel !== channel || !message.payload) return;
      let sent: { node: string; change: Change };
      try {
        sent = JSON.parse(message.payload) as { node: string; change: Change };
      } catch (error) {
        // Anyone who can connect can NOTIFY on the channel: a bad payload must not crash the node.
        options.onError(error);
        return;
      }
      if (sent.node === nodeId) return;
      relay(sent.change);
    });
    try {
      await client.connect();
      await client.query(`LISTEN "${channel.replaceAll('"', '')}"`);
    } catch (error) {
      lost = true;
      await client.end().catch(() => {});
      throw error;
    }
    return client;
  };

  const schedule = () => {
    if (closed) return;
    failures++;
    retry = setTimeout(reconnect, backoffDelay(failures, backoff));
  };

  const reconnect = async () => {
    retry = undefined;
    if (closed) return;
    let client: pg.Client;
    try {
      client = await listen();
    } catch (error) {
      options.onError(error);
      schedule();
      return;
    }
    if (closed) {
      await client.end().catch(() => {});
      return;
    }
    listener = client;
    const attempts = failures;
    failures = 0;
    // Whatever other nodes changed while this one was not listening: reload it all. Local only
    // (relaying): every node that lost its session does the same for itself. Runs from a timer:
    // a subscriber that throws is reported, not left to crash the process.
    try {
      options.onReconnect?.(attempts);
      relay({ kind: 'everything', projectId: 0 });
    } catch (error) {
      options.onError(error);
    }
  };

  // The first session must work: a node that cannot listen at start is misconfigured.
  listener = await listen();
  let probing = false;
  const probe = setInterval(() => {
    const client = listener;
    if (!client || probing) return;
    probing = true;
    client.query('SELECT 1').then(
      () => {
        probing = false;
      },
      (error: unknown) => {
        probing = false;
        if (listener !== client) return;
        lose.get(client)?.(error);
        // Ends the session even when the probe hangs (pg destroys the socket then).
        client.end().catch(() => {});
      },
    );
  }, heartbeat.everyMs);
  probe.unref();
  const unsubscribe = feed.subscribe((change) => {
    if (relaying) return; // came from another node, or is this node's own reload: do not send it
    notifier
      .query('SELECT pg_notify($1, $2)', [channel, JSON.stringify({ node: nodeId, change })])
      .catch(options.onError);
  });
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      clearInterval(probe);
      unsubscribe();
      const current = listener;
      listener = undefined;
      await current?.end().catch(() => {});
      await notifier.end();
    },
  };
}
