import type { ServerResponse } from 'node:http';
import type { ApiError } from '../lib/api-error.ts';

/**
 * The edge's one JSON responder: health answers, the operator listener's and every Error the edge
 * gives itself (`sendError`), over HTTP/1.1, node:http2's compatibility response and the direct
 * stream response (http2-direct.ts) alike. The body goes out with its head, with its length;
 * a HEAD request gets the head alone.
 */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>>,
  method?: string,
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(method === 'HEAD' ? undefined : text);
}

/** An Error in the `{ code, message, status }` shape, its own headers (Retry-After, Allow…) and the request id. */
export function sendError(res: ServerResponse, error: ApiError, requestId: string): void {
  sendJson(
    res,
    error.status,
    error.toBody(),
    requestId === '' ? error.headers : { 'x-request-id': requestId, ...error.headers },
  );
}
