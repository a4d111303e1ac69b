import { type ApiErrorBody, ApiFailure, CliError, EXIT, UsageError } from './errors.ts';

/** How long one request may take; a verification waits for DNS, so this is generous. */
export const REQUEST_TIMEOUT_MS = 120_000;

export interface ApiAnswer<T> {
  status: number;
  headers: Headers;
  body: T;
}

export interface ApiClientOptions {
  /** The platform's address, e.g. `https://kennel.example.com` (a path prefix is kept). */
  readonly server: string;
  /** Sent as `Authorization: Bearer <token>`; never printed. */
  readonly token?: string;
  /** Extra headers on every request (the session cookie and X-CSRF-Token during login). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
  readonly userAgent?: string;
}

/**
 * `path\`/api/v1/projects/${slug}\``: a path whose interpolated parts are percent-encoded, so a
 * slug or hostname can never change the route.
 */
export function path(strings: TemplateStringsArray, ...parts: (string | number)[]): string {
  return strings.reduce(
    (out, s, i) => out + s + (i < parts.length ? encodeURIComponent(String(parts[i])) : ''),
    '',
  );
}

/** Checks and normalises a server address (`http(s)://host[:port][/prefix]`, no trailing slash). */
export function normaliseServer(input: string): string {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new UsageError(`"${input}" is not a server address: give an http:// or https:// URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`The server address must start with http:// or https:// (got ${url.protocol}).`);
  }
  if (url.username || url.password) {
    throw new UsageError('Put no user name or password in the server address; sign in with kennel login.');
  }
  if (url.search || url.hash) throw new UsageError('The server address takes no ?query or #fragment.');
  return url.toString().replace(/\/+$/, '');
}

function isErrorBody(value: unknown): value is ApiErrorBody {
  const v = value as Partial<ApiErrorBody> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.code === 'string' &&
    typeof v.message === 'string' &&
    typeof v.status === 'number'
  );
}

/** Why fetch failed, in words: `connect ECONNREFUSED 127.0.0.1:8080`, `getaddrinfo ENOTFOUND x`. */
function networkCause(error: unknown): string {
  let cause: unknown = error;
  while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
  const e = cause as Error & { code?: string };
  return e.code && !e.message.includes(e.code) ? `${e.code}: ${e.message}` : e.message;
}

/**
 * A thin client of the management API: JSON in, JSON out. An error answer becomes an
 * `ApiFailure` carrying the API's `{ code, message, status }`; a server that cannot be reached
 * (or answers something that is not the API) becomes a `CliError` with exit code 4.
 */
export class ApiClient {
  readonly server: string;
  readonly #token: string | undefined;
  readonly #headers: Readonly<Record<string, string>>;
  readonly #timeoutMs: number;
  readonly #userAgent: string;

  constructor(options: ApiClientOptions) {
    this.server = options.server;
    this.#token = options.token;
    this.#headers = options.headers ?? {};
    this.#timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
    this.#userAgent = options.userAgent ?? 'kennel-cli';
  }

  get hasToken(): boolean {
    return this.#token !== undefined;
  }

  /** The same server with other credentials. */
  with(options: { token?: string; headers?: Record<string, string> }): ApiClient {
    return new ApiClient({
      server: this.server,
      token: options.token,
      headers: options.headers,
      timeoutMs: this.#timeoutMs,
      userAgent: this.#userAgent,
    });
  }

  get<T>(route: string): Promise<T> {
    return this.request<T>('GET', route).then((a) => a.body);
  }

  post<T>(route: string, body?: unknown): Promise<T> {
    return this.request<T>('POST', route, body).then((a) => a.body);
  }

  put<T>(route: string, body?: unknown): Promise<T> {
    return this.request<T>('PUT', route, body).then((a) => a.body);
  }

  delete<T = undefined>(route: string): Promise<T> {
    return this.request<T>('DELETE', route).then((a) => a.body);
  }

  async request<T>(method: string, route: string, body?: unknown): Promise<ApiAnswer<T>> {
    const url = `${this.server}${route}`;
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': this.#userAgent,
      ...this.#headers,
    };
    if (this.#token !== undefined) headers.authorization = `Bearer ${this.#token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      const timedOut = (error as Error).name === 'TimeoutError';
      throw new CliError(
        timedOut
          ? `The Kennel server at ${this.server} did not answer within ${Math.round(this.#timeoutMs / 1000)} s.`
          : `Cannot reach the Kennel server at ${this.server} (${networkCause(error)}). Is it running? Choose another with --server or KENNEL_URL.`,
        EXIT.unreachable,
        timedOut ? 'timeout' : 'server_unreachable',
      );
    }
    let parsed: unknown;
    if (text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
    }
    if (response.status >= 400) {
      if (isErrorBody(parsed)) throw new ApiFailure(parsed);
      throw new ApiFailure({
        code: `http_${response.status}`,
        message:
          response.status >= 500
            ? `${method} ${url} answered ${response.status} ${response.statusText} without a Kennel API error: the server, or a proxy in front of it, failed. Try again later.`
            : `${method} ${url} answered ${response.status} ${response.statusText}, not a Kennel API error. Is ${this.server} the Kennel platform?`,
        status: response.status,
      });
    }
    if (text !== '' && parsed === undefined) {
      throw new CliError(
        `${method} ${url} answered ${response.status} with something that is not JSON. Is ${this.server} the Kennel platform?`,
        EXIT.unreachable,
        'not_the_api',
      );
    }
    return { status: response.status, headers: response.headers, body: parsed as T };
  }
}
