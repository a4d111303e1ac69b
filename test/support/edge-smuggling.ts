import {
  type EdgeSite,
  type RecordingOrigin,
  recordingOrigin,
  type SeenRequest,
  startEdgeSite,
} from './edge-site.ts';

/**
 * What the smuggling corpora's payloads carry (test/edge/smuggling.test.ts over HTTP/1.1,
 * http2-downgrade.test.ts over HTTP/2): a complete `GET /smuggled` and an unfinished
 * `DELETE /pets/2 … X-Ignore:` that would swallow the next request's line.
 */
export const SMUGGLED =
  'GET /smuggled HTTP/1.1\r\nHost: shop\r\n\r\nDELETE /pets/2 HTTP/1.1\r\nHost: shop\r\nX-Ignore: ';

/** The site the corpora attack, and the origin behind it. */
export interface SmugglingTarget {
  readonly site: EdgeSite;
  /** Keeps every request it read, bodies in latin1 (the bytes as sent). */
  readonly origin: RecordingOrigin;
  close(): Promise<void>;
}

/**
 * `shop` on a platform on SQLite (its clock at the real time when `now`, for TLS), its origin
 * answering `reply(request)` as JSON: the edge the corpus attacks is started on `site.p`.
 */
export async function startSmugglingTarget(
  reply: (seen: SeenRequest) => unknown,
  { now = false }: { now?: boolean } = {},
): Promise<SmugglingTarget> {
  const origin = await recordingOrigin({ encoding: 'latin1', reply });
  try {
    const site = await startEdgeSite('sqlite', { now, projects: [{ slug: 'shop', originUrl: origin.url }] });
    return {
      site,
      origin,
      async close() {
        origin.close();
        await site.close();
      },
    };
  } catch (error) {
    origin.close();
    throw error;
  }
}
