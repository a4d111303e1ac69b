import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CallerIdentity, CredentialSource } from './identify-caller.ts';
import type { TrafficRecorder, TrafficRequest } from './traffic-recorder.ts';

/** What routing learned of an API request, for traffic: set by forwardApi, read when it ends. */
export interface TrafficTag {
  readonly projectId: number;
  /** `GET /pets/{petId}` or `unmatched`. */
  readonly operation: string;
  /** The path as served (`/api/pets/7`), without the query. */
  readonly path: string;
  readonly credentials: readonly CredentialSource[];
}

/** The request's end, as the edge measured it. */
export interface TrafficEnd {
  readonly requestId: string;
  /** `performance.now()` when the request arrived. */
  readonly startedAt: number;
  readonly socket: { readonly bytesWritten: number } | undefined;
  readonly bytesBefore: number;
}

/** Paths longer than this are cut in the request log (memory per entry stays bounded). */
const MAX_LOGGED_PATH = 512;
/** Status of a request whose client left before any answer (nginx's "client closed request"). */
export const CLIENT_CLOSED = 499;

/**
 * The query string reduced to its names (`?limit=&status=`): values may carry tokens, names say
 * how the API is used.
 */
export function queryNames(url: string): string {
  const at = url.indexOf('?');
  if (at === -1 || at === url.length - 1) return '';
  const names = url
    .slice(at + 1)
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const eq = pair.indexOf('=');
      return `${eq === -1 ? pair : pair.slice(0, eq)}=`;
    });
  return names.length === 0 ? '' : `?${names.join('&')}`;
}

/**
 * The edge's side of traffic: turns a tagged request's end into one TrafficRequest for the
 * recorder. Runs in the response's 'close' listener: it never throws.
 */
export class EdgeTraffic {
  readonly #recorder: TrafficRecorder;
  readonly #identity: CallerIdentity;
  readonly #onError: (error: unknown) => void;
  /** The request being recorded: one object for every request (the recorder copies what it keeps). */
  readonly #request: { -readonly [K in keyof TrafficRequest]: TrafficRequest[K] } = {
    projectId: 0,
    operation: '',
    method: '',
    path: '',
    status: 0,
    latencyMs: Number.NaN,
    bytesIn: 0,
    bytesOut: 0,
    caller: { caller: '', label: '', kind: 'address' },
    requestId: '',
  };

  constructor(recorder: TrafficRecorder, identity: CallerIdentity, onError: (error: unknown) => void) {
    this.#recorder = recorder;
    this.#identity = identity;
    this.#onError = onError;
  }

  get recorder(): TrafficRecorder {
    return this.#recorder;
  }

  finished(req: IncomingMessage, res: ServerResponse, tag: TrafficTag, end: TrafficEnd): void {
    try {
      const url = req.url ?? '/';
      const declared = Number(req.headers['content-length']);
      const path = `${tag.path}${queryNames(url)}`;
      const request = this.#request;
      request.latencyMs = performance.now() - end.startedAt;
      request.projectId = tag.projectId;
      request.operation = tag.operation;
      request.method = req.method ?? 'GET';
      request.path = path.length > MAX_LOGGED_PATH ? `${path.slice(0, MAX_LOGGED_PATH)}…` : path;
      request.status = res.headersSent ? res.statusCode : CLIENT_CLOSED;
      request.bytesIn = Number.isSafeInteger(declared) && declared > 0 ? declared : 0;
      request.bytesOut =
        end.socket === undefined ? 0 : Math.max(0, end.socket.bytesWritten - end.bytesBefore);
      request.caller = this.#identity.identify(tag.projectId, req, url, tag.credentials);
      request.requestId = end.requestId;
      this.#recorder.record(request);
    } catch (error) {
      this.#onError(error);
    }
  }
}
