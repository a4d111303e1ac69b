import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import type { ApiError } from '../lib/api-error.ts';
import { edgeErrors } from './errors.ts';
import type { NodeHealth } from './health.ts';
import { sendJson } from './json-answer.ts';

/**
 * The operator listener (METRICS_PORT, loopback by default): `/metrics` in the Prometheus text
 * format, plus `/healthz` and `/readyz` for probes that should not go through the public ports.
 * Metrics name every project and reveal traffic, so they are never served on the public ports.
 */
export function createOperatorHandler(options: {
  registry: Registry;
  health: NodeHealth;
  /** `POST /backup`: SQLite only (undefined on PostgreSQL, which pg_dump backs up). */
  backup?: { run(): Promise<unknown>; readonly running: boolean };
  onError: (error: unknown) => void;
}): (req: IncomingMessage, res: ServerResponse) => void {
  const { registry, health, backup } = options;
  return (req, res) => {
    if (health.answer(req, res, '')) return;
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/backup') {
      answerBackup(req, res, backup, options.onError);
      return;
    }
    if (path !== '/metrics') {
      plain(res, 404, 'Not found: this listener serves /metrics, /healthz, /readyz and POST /backup.\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      plain(res, 405, 'Use GET.\n', { allow: 'GET, HEAD' });
      return;
    }
    registry.metrics().then(
      (text) => {
        res.writeHead(200, {
          'content-type': registry.contentType,
          'content-length': Buffer.byteLength(text),
          'cache-control': 'no-store',
        });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        options.onError(error);
        plain(res, 500, `Collecting metrics failed: ${(error as Error).message}\n`);
      },
    );
  };
}

/**
 * Backups are a change (they write files), so POST only; the answer names the files written.
 * Errors use the `{ code, message, status }` shape of every Kennel API.
 */
function answerBackup(
  req: IncomingMessage,
  res: ServerResponse,
  backup: { run(): Promise<unknown>; readonly running: boolean } | undefined,
  onError: (error: unknown) => void,
): void {
  const fail = (error: ApiError) =>
    sendJson(res, error.status, error.toBody(), { ...error.headers, 'cache-control': 'no-store' });
  if (req.method !== 'POST') {
    fail(
      edgeErrors.error('backup_method_not_allowed', 'Use POST /backup to write a backup.', {
        headers: { allow: 'POST' },
      }),
    );
    return;
  }
  if (!backup) {
    fail(
      edgeErrors.error(
        'backup_not_available',
        'This node stores its data in PostgreSQL: back it up with pg_dump (docs/operations.md).',
      ),
    );
    return;
  }
  if (backup.running) {
    fail(edgeErrors.error('backup_running', 'A backup is being written; try again when it has finished.'));
    return;
  }
  backup.run().then(
    (files) => sendJson(res, 201, { files }, { 'cache-control': 'no-store' }),
    (error: unknown) => {
      onError(error);
      fail(edgeErrors.error('backup_failed', `The backup failed: ${(error as Error).message}`));
    },
  );
}

function plain(
  res: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}
