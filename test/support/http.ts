import { request } from 'node:http';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * A plain HTTP request to a loopback port with the Host header the test chooses (Node's fetch
 * sets Host from the URL, and its resolver does not know `*.localhost` or the test domains).
 */
export function requestAs(
  port: number,
  host: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: init.method ?? 'GET', headers: { host, ...init.headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

/**
 * A flat header list (`[name, value, …]`, as the edge's origin client gives it) as an object for
 * assertions: a repeated header's values in an array, in order.
 */
export function headerObject(flat: readonly string[]): Record<string, string | string[]> {
  const object: Record<string, string | string[]> = {};
  for (let i = 0; i < flat.length; i += 2) {
    const name = flat[i] as string;
    const value = flat[i + 1] as string;
    const prior = object[name];
    object[name] =
      prior === undefined ? value : typeof prior === 'string' ? [prior, value] : [...prior, value];
  }
  return object;
}
