import { isIP } from 'node:net';
import { Agent, request } from 'undici';
import { signWebhook } from './sign-webhook.ts';
import { guardedLookup, isPublicAddress, type TargetPolicy } from './target-policy.ts';

/** One message to one URL, as the worker hands it over. */
export interface DeliveryRequest {
  readonly messageId: string;
  readonly url: string;
  readonly secret: string;
  /** The JSON envelope, sent byte for byte as signed. */
  readonly body: string;
  /** The attempt's time: it is what `webhook-timestamp` says. */
  readonly at: Date;
}

/** What one attempt came to: delivered on any 2xx; otherwise the status or the error says why. */
export interface DeliveryResult {
  readonly ok: boolean;
  readonly statusCode: number | null;
  readonly durationMs: number;
  readonly error: string | null;
}

export interface Deliverer {
  deliver(request: DeliveryRequest): Promise<DeliveryResult>;
  close(): Promise<void>;
}

/**
 * Sends signed webhooks over undici with a total time limit per attempt. Redirects are not
 * followed (a receiver that moved updates its URL); the response body is read up to a small
 * limit and dropped, since only the status matters.
 */
export function createDeliverer(options: {
  readonly timeoutMs: number;
  readonly policy: TargetPolicy;
  readonly userAgent?: string;
  /** Measures durations; a real monotonic clock unless a test wants exact figures. */
  readonly elapsed?: () => number;
}): Deliverer {
  const agent = new Agent({
    connect: { lookup: guardedLookup(options.policy) as never, timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    keepAliveTimeout: 10_000,
  });
  const elapsed = options.elapsed ?? (() => performance.now());
  return {
    async deliver(delivery) {
      const started = elapsed();
      const done = (statusCode: number | null, error: string | null): DeliveryResult => ({
        ok: statusCode !== null && statusCode >= 200 && statusCode < 300,
        statusCode,
        durationMs: Math.max(0, Math.round(elapsed() - started)),
        error,
      });
      const host = new URL(delivery.url).hostname.replace(/^\[|\]$/g, '');
      if (!options.policy.allowPrivate && isIP(host) !== 0 && !isPublicAddress(host)) {
        return done(null, `${host} is not a public address`);
      }
      try {
        const response = await request(delivery.url, {
          method: 'POST',
          dispatcher: agent,
          signal: AbortSignal.timeout(options.timeoutMs),
          headers: {
            'content-type': 'application/json',
            'user-agent': options.userAgent ?? 'Kennel-Webhooks/1',
            ...signWebhook(delivery.secret, delivery.messageId, delivery.at, delivery.body),
          },
          body: delivery.body,
        });
        await drain(response.body, 64 * 1024);
        return done(response.statusCode, response.statusCode < 300 ? null : `HTTP ${response.statusCode}`);
      } catch (error) {
        return done(null, describe(error, options.timeoutMs));
      }
    },
    close: () => agent.close(),
  };
}

async function drain(body: AsyncIterable<Buffer> & { destroy(): void }, limit: number): Promise<void> {
  let read = 0;
  try {
    for await (const chunk of body) {
      read += chunk.length;
      if (read > limit) break;
    }
  } finally {
    body.destroy();
  }
}

function describe(error: unknown, timeoutMs: number): string {
  const e = error as { name?: string; code?: string; message?: string; cause?: unknown };
  if (
    e.name === 'TimeoutError' ||
    e.code === 'UND_ERR_HEADERS_TIMEOUT' ||
    e.code === 'UND_ERR_BODY_TIMEOUT'
  ) {
    return `timed out after ${timeoutMs} ms`;
  }
  const cause = e.cause as { code?: string; message?: string } | undefined;
  const code = cause?.code ?? e.code;
  const message = cause?.message ?? e.message ?? String(error);
  return (code ? `${code}: ${message}` : message).slice(0, 500);
}
