import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from './json-answer.ts';

export const LIVENESS_PATH = '/healthz';
export const READINESS_PATH = '/readyz';

export interface Readiness {
  readonly ready: boolean;
  readonly status: 'starting' | 'ready' | 'draining' | 'unready';
  readonly checks: { readonly database: string };
}

/**
 * Liveness and readiness of one node. Starting (with `starting: true`) from the moment the
 * listeners are bound until `started()`: the start binds every port before it creates anything
 * (the first admin, the first project), and meanwhile neither probe says 200, so the first 200 a
 * script or a load balancer sees means the node works. Then live while the process answers at
 * all; ready while the database answers within the timeout and the node is not draining.
 * Draining starts at the first shutdown signal and never ends, so a load balancer stops sending
 * traffic before the listeners close.
 */
export class NodeHealth {
  readonly #pingDatabase: () => Promise<unknown>;
  readonly #timeoutMs: number;
  #starting: boolean;
  #draining = false;

  constructor(options: { pingDatabase: () => Promise<unknown>; timeoutMs: number; starting?: boolean }) {
    this.#pingDatabase = options.pingDatabase;
    this.#timeoutMs = options.timeoutMs;
    this.#starting = options.starting ?? false;
  }

  /** Until `started()`: the edge answers 503 `node_starting` (observe-requests.ts). */
  get starting(): boolean {
    return this.#starting;
  }

  /** The start is done: everything it creates exists. */
  started(): void {
    this.#starting = false;
  }

  get draining(): boolean {
    return this.#draining;
  }

  startDraining(): void {
    this.#draining = true;
  }

  async readiness(): Promise<Readiness> {
    const database = await this.#database();
    if (this.#draining) return { ready: false, status: 'draining', checks: { database } };
    if (this.#starting) return { ready: false, status: 'starting', checks: { database } };
    return database === 'ok'
      ? { ready: true, status: 'ready', checks: { database } }
      : { ready: false, status: 'unready', checks: { database } };
  }

  async #database(): Promise<string> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.#pingDatabase(),
        new Promise((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer within ${this.#timeoutMs} ms`)),
            this.#timeoutMs,
          );
        }),
      ]);
      return 'ok';
    } catch (error) {
      return `failing: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Answers `/healthz` and `/readyz` (GET or HEAD) and returns true; false for any other request.
   * Answers carry `cache-control: no-store` so no cache in between replays an old state.
   */
  answer(req: IncomingMessage, res: ServerResponse, requestId: string): boolean {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== LIVENESS_PATH && path !== READINESS_PATH) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(res, req, 405, { status: 'method_not_allowed' }, requestId, { allow: 'GET, HEAD' });
      return true;
    }
    if (path === LIVENESS_PATH) {
      if (this.#starting) send(res, req, 503, { status: 'starting' }, requestId, STARTING_RETRY);
      else send(res, req, 200, { status: 'live' }, requestId);
      return true;
    }
    this.readiness().then(
      (readiness) =>
        send(
          res,
          req,
          readiness.ready ? 200 : 503,
          { status: readiness.status, checks: readiness.checks },
          requestId,
          readiness.status === 'starting' ? STARTING_RETRY : {},
        ),
      (error: unknown) => res.destroy(error as Error),
    );
    return true;
  }
}

/** A start takes about a second (a first start hashes the admin's password, deploys a document). */
export const STARTING_RETRY = { 'retry-after': '1' };

function send(
  res: ServerResponse,
  req: IncomingMessage,
  status: number,
  body: unknown,
  requestId: string,
  headers: Record<string, string> = {},
): void {
  const always = { 'cache-control': 'no-store', ...headers };
  sendJson(
    res,
    status,
    body,
    requestId === '' ? always : { 'x-request-id': requestId, ...always },
    req.method,
  );
}
