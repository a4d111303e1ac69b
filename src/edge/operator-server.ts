import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import type { NodeHealth } from './health.ts';

/**
 * The operator listener (METRICS_PORT, loopback by default): `/metrics` in the Prometheus text
 * format, plus `/healthz` and `/readyz` for probes that should not go through the public ports.
 * Metrics name every project and reveal traffic, so they are never served on the public ports.
 */
export function createOperatorHandler(options: {
  registry: Registry;
  health: NodeHealth;
  onError: (error: unknown) => void;
}): (req: IncomingMessage, res: ServerResponse) => void {
  const { registry, health } = options;
  return (req, res) => {
    if (health.answer(req, res, '')) return;
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      plain(res, 404, 'Not found: this listener serves /metrics, /healthz and /readyz.\n');
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
