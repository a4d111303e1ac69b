import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { PlatformContext } from '../platform/context.ts';
import type { OriginProxy } from './proxy.ts';
import type { EdgeTraffic, TrafficTag } from './traffic/edge-traffic.ts';

/*
 * What the edge's handler (edge-server.ts) is given, and the one object each request is followed
 * by through its steps (src/edge/steps/) and the operations hooks.
 */

export interface EdgeDeps {
  readonly ctx: PlatformContext;
  /** The control plane's app, served at the platform domain itself. */
  readonly platformApp: FastifyInstance;
  readonly proxy: OriginProxy;
  /** Which hosts have a certificate (those are redirected from HTTP to HTTPS). */
  readonly certificates?: { has(host: string): boolean | Promise<boolean>; clear(): void };
  /** http-01 answers, for any host. */
  readonly challenges?: { answer(token: string): Promise<string | undefined> };
  /** The HTTPS port to redirect to (omitted from URLs when 443). */
  readonly httpsPort?: number;
  /** Operations: health answers, metrics, access logs (src/edge/observe-requests.ts). */
  readonly hooks?: EdgeHooks;
  /** Traffic recording (src/edge/traffic/): API requests by operation and caller; none: off. */
  readonly traffic?: EdgeTraffic;
}

/** One request as the operations hooks see it; `serve` fills in what routing learns. */
export interface EdgeExchange {
  readonly requestId: string;
  readonly host: string;
  /** `performance.now()` when the request arrived. */
  readonly startedAt: number;
  /** The project's slug once routing found one (else a reserved label, see observe-requests.ts). */
  project: string | undefined;
  /** Milliseconds spent forwarding to the origin and streaming its answer back, when proxied. */
  upstreamMs: number | undefined;
  /**
   * The connection and its bytes written before this response, so the hooks can count the
   * response's own (Node detaches the socket from the request before 'close').
   */
  socket: { readonly bytesWritten: number } | undefined;
  bytesBefore: number;
  /** Set for an API request when traffic is recorded: its project, operation and caller's place. */
  traffic: TrafficTag | undefined;
}

/**
 * What operations hang on the edge. Kept to three calls so the request path pays for one small
 * object and two clock reads when no hooks are given. `finished` runs in a 'close' listener:
 * it must not throw.
 */
export interface EdgeHooks {
  /** Before routing: answers operator paths (health checks) itself and returns true. */
  intercept(req: IncomingMessage, res: ServerResponse, exchange: EdgeExchange): boolean;
  /** Once per routed request, when its response has ended or the connection dropped. */
  finished(req: IncomingMessage, res: ServerResponse, exchange: EdgeExchange): void;
  /** The edge failed to serve the request (a bug or a database error), with the request id. */
  failed(exchange: EdgeExchange, error: unknown): void;
}

export const CHALLENGE_PREFIX = '/.well-known/acme-challenge/';
/** Project labels for requests that are not for a project (metrics and logs). */
export const PLATFORM_LABEL = '_platform';
export const ACME_LABEL = '_acme';
export const REDIRECT_LABEL = '_redirect';
export const UNKNOWN_LABEL = '_unknown';

/**
 * The hostname a request is for: Host without port, lowercase, no trailing dot. A Host with
 * anything but a port after the name (`shop.test:@attacker.test`) is no site's: '' (host_not_found).
 */
export function hostOf(req: IncomingMessage): string {
  const raw = req.headers.host ?? '';
  const end = raw.startsWith('[') ? raw.indexOf(']') + 1 : raw.indexOf(':');
  if (end !== -1 && end !== raw.length && !PORT.test(raw.slice(end))) return '';
  const host = (end === -1 ? raw : raw.slice(0, end)).toLowerCase();
  return host.endsWith('.') ? host.slice(0, -1) : host;
}
const PORT = /^:\d{0,5}$/;
