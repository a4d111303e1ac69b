import type { IncomingMessage, ServerResponse } from 'node:http';
import { Pool } from 'undici';
import type { ApiError } from '../lib/api-error.ts';
import { edgeErrors } from './errors.ts';

/** Headers that describe one connection, not the message: never forwarded (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

export interface ProxyOptions {
  /** Connecting to the origin. */
  readonly connectTimeoutMs: number;
  /** Waiting for the origin's response headers, then between body chunks. */
  readonly responseTimeoutMs: number;
  /** Told of every failed forward (metrics and logs); `answered` when headers had gone out. */
  readonly onError?: (error: unknown, requestId: string, answered: boolean) => void;
}

export interface ForwardedFor {
  readonly clientAddress: string;
  readonly host: string;
  readonly proto: 'http' | 'https';
  readonly requestId: string;
}

/**
 * Forwards requests to project origins over kept-alive connections (one undici Pool per origin),
 * adding X-Forwarded-* and Forwarded (RFC 7239) and the request id. A refused connection is 502
 * `origin_unreachable`, a slow origin 504 `origin_timeout`, both with the Error body.
 */
export class OriginProxy {
  readonly #pools = new Map<string, Pool>();
  readonly #options: ProxyOptions;

  constructor(options: ProxyOptions) {
    this.#options = options;
  }

  #pool(origin: string): Pool {
    let pool = this.#pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, {
        connections: 128,
        pipelining: 1,
        keepAliveTimeout: 30_000,
        connectTimeout: this.#options.connectTimeoutMs,
        headersTimeout: this.#options.responseTimeoutMs,
        bodyTimeout: this.#options.responseTimeoutMs,
      });
      this.#pools.set(origin, pool);
    }
    return pool;
  }

  async forward(
    req: IncomingMessage,
    res: ServerResponse,
    originUrl: string,
    path: string,
    forwarded: ForwardedFor,
  ): Promise<void> {
    const origin = new URL(originUrl);
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || HOP_BY_HOP.has(name) || name === 'host') continue;
      headers[name] = value;
    }
    const priorFor = req.headers['x-forwarded-for'];
    headers['x-forwarded-for'] = priorFor
      ? `${priorFor}, ${forwarded.clientAddress}`
      : forwarded.clientAddress;
    headers['x-forwarded-host'] = forwarded.host;
    headers['x-forwarded-proto'] = forwarded.proto;
    const node = forwarded.clientAddress.includes(':')
      ? `"[${forwarded.clientAddress}]"`
      : forwarded.clientAddress;
    headers.forwarded = `for=${node};host=${forwarded.host};proto=${forwarded.proto}`;
    headers['x-request-id'] = forwarded.requestId;
    const hasBody =
      req.method !== 'GET' &&
      req.method !== 'HEAD' &&
      (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined);
    const basePath = origin.pathname.replace(/\/$/, '');
    try {
      const answer = await this.#pool(origin.origin).request({
        method: (req.method ?? 'GET') as 'GET',
        path: `${basePath}${path}`,
        headers,
        body: hasBody ? req : null,
      });
      const out: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value === undefined || HOP_BY_HOP.has(name)) continue;
        out[name] = value;
      }
      out['x-request-id'] = forwarded.requestId;
      res.writeHead(answer.statusCode, out);
      for await (const chunk of answer.body) res.write(chunk);
      res.end();
    } catch (error) {
      this.#options.onError?.(error, forwarded.requestId, res.headersSent);
      if (res.headersSent) {
        res.destroy(error as Error);
        return;
      }
      sendError(res, originError(error), forwarded.requestId);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.#pools.values()].map((pool) => pool.close()));
  }
}

function originError(error: unknown): ApiError {
  const code = (error as { code?: string }).code ?? '';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return edgeErrors.error(
      'origin_timeout',
      "The project's API did not answer in time. Try again; if it persists, the project's owner should check its origin.",
    );
  }
  return edgeErrors.error(
    'origin_unreachable',
    "The project's API could not be reached. Try again shortly; if it persists, the project's owner should check that its origin is running.",
    { cause: error },
  );
}

export function sendError(res: ServerResponse, error: ApiError, requestId: string): void {
  const body = JSON.stringify(error.toBody());
  res.writeHead(error.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
    ...error.headers,
  });
  res.end(body);
}
