import { type ApiErrorBody, ApiFailure, CliError, EXIT } from './errors.ts';

/** How long one request may take; a verification waits for DNS, so this is generous. */
export const REQUEST_TIMEOUT_MS = 120_000;
/** How long the OpenAPI document may take when checking which server answered. */
const PROBE_TIMEOUT_MS = 10_000;

export interface ApiAnswer<T> {
  status: number;
  headers: Headers;
  body: T;
}

/**
 * Which server a client expects, told by its OpenAPI document's `info.title`: an answer that is
 * not that API's (no Error body on a 4xx, not JSON, no such operation) is checked against it, so
 * a wrong address reads "this is not a Kennel server", not the other server's own error.
 */
export interface ServerIdentity {
  /** For messages: `a Kennel server`. */
  readonly name: string;
  readonly documentPath: string;
  readonly title: string;
}

export const KENNEL_PLATFORM: ServerIdentity = {
  name: 'a Kennel server',
  documentPath: '/api/v1/openapi.json',
  title: 'Kennel management API',
};

export const PETSTORE_API: ServerIdentity = {
  name: 'the Petstore API',
  documentPath: '/openapi.json',
  title: 'Petstore API',
};

/** An answer the client could not read as its API's, before the identity check. */
interface Oddity {
  readonly method: string;
  readonly route: string;
  /** `404 (text/html)`, `200 JSON of another shape`. */
  readonly answered: string;
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
  /** The API expected there (default: the Kennel platform's management API). */
  readonly identity?: ServerIdentity;
  /** Told the X-Kennel-Version of each answer (the CLI notices a server newer than itself). */
  readonly onServerVersion?: (version: string, server: string) => void;
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
  readonly #identity: ServerIdentity;
  readonly #onServerVersion: ApiClientOptions['onServerVersion'];

  constructor(options: ApiClientOptions) {
    this.server = options.server;
    this.#token = options.token;
    this.#headers = options.headers ?? {};
    this.#timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
    this.#userAgent = options.userAgent ?? 'kennel-cli';
    this.#identity = options.identity ?? KENNEL_PLATFORM;
    this.#onServerVersion = options.onServerVersion;
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
      identity: this.#identity,
      onServerVersion: this.#onServerVersion,
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

  patch<T>(route: string, body?: unknown): Promise<T> {
    return this.request<T>('PATCH', route, body).then((a) => a.body);
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
    const serverVersion = response.headers.get('x-kennel-version');
    if (serverVersion) this.#onServerVersion?.(serverVersion, this.server);
    let parsed: unknown;
    if (text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
    }
    const type = (response.headers.get('content-type') ?? 'no content type').split(';')[0]?.trim() ?? '';
    const isJson = /^application\/(?:[\w.+-]+\+)?json$/i.test(type);
    const oddity = { method, route, answered: `${response.status} (${type})` };
    if (response.status >= 400) {
      if (isErrorBody(parsed)) {
        // Another API built like this one answers a route it lacks with a well-formed 404.
        if (parsed.code === 'route_not_found' || parsed.code === 'method_not_allowed') {
          const lacking = { method, route, answered: `${response.status} ${parsed.code}` };
          throw await this.wrongServer(lacking, this.#versionMismatch(lacking));
        }
        throw new ApiFailure(parsed);
      }
      // Not the API's answer: another server, or a proxy in front of the platform.
      const fromProxy = new ApiFailure({
        code: `http_${response.status}`,
        message:
          response.status >= 500
            ? `${method} ${url} answered ${response.status} ${response.statusText} without a Kennel API error: the server, or a proxy in front of it, failed. Try again later.`
            : `${method} ${url} answered ${response.status} ${response.statusText} without a Kennel API error: a proxy in front of the platform refused the request.`,
        status: response.status,
      });
      throw await this.wrongServer(oddity, fromProxy, response.status >= 500 ? fromProxy : undefined);
    }
    if (text !== '' && (parsed === undefined || !isJson)) {
      throw await this.wrongServer(
        oddity,
        new CliError(
          `${method} ${url} answered ${response.status} with something that is not JSON (${type}): a proxy in front of the platform answered instead.`,
          EXIT.unreachable,
          'not_the_api',
        ),
      );
    }
    return { status: response.status, headers: response.headers, body: parsed as T };
  }

  /**
   * Opens a stream of Server-Sent Events (`kennel logs --follow`): the answer, whose body the
   * caller reads as it comes, with no time limit but `signal`. An answer that is not a stream is
   * asked again as a plain request, which throws its error as `request` does.
   */
  async stream(route: string, headers: Record<string, string>, signal: AbortSignal): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(`${this.server}${route}`, {
        headers: {
          accept: 'text/event-stream',
          'user-agent': this.#userAgent,
          ...this.#headers,
          ...headers,
          ...(this.#token === undefined ? {} : { authorization: `Bearer ${this.#token}` }),
        },
        signal,
      });
    } catch (error) {
      if (signal.aborted) throw error;
      throw new CliError(
        `Cannot reach the Kennel server at ${this.server} (${networkCause(error)}). Is it running? Choose another with --server or KENNEL_URL.`,
        EXIT.unreachable,
        'server_unreachable',
      );
    }
    if (response.ok && (response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      return response;
    }
    await response.body?.cancel();
    await this.request('GET', route);
    throw new CliError(
      `GET ${this.server}${route} did not answer with a stream of events: a proxy in front of the platform answered instead.`,
      EXIT.unreachable,
      'not_the_api',
    );
  }

  /**
   * A request whose answer must have a shape `looksRight` recognises: where another server's
   * 200 JSON would otherwise be read as ours (signing in, whoami).
   */
  async shaped<T>(
    method: string,
    route: string,
    looksRight: (body: Partial<T> | null | undefined) => boolean,
    body?: unknown,
  ): Promise<ApiAnswer<T>> {
    const answer = await this.request<T>(method, route, body);
    if (looksRight(answer.body as Partial<T> | null | undefined)) return answer;
    const oddity = { method, route, answered: `${answer.status} with JSON of another shape` };
    throw await this.wrongServer(oddity, this.#versionMismatch(oddity));
  }

  #versionMismatch(oddity: Oddity): CliError {
    return new CliError(
      `${this.server} is ${this.#identity.name}, but ${oddity.method} ${oddity.route} answered ${oddity.answered}: the server is older or newer than this CLI (${this.#userAgent.split(' ')[0]}). Use a CLI of the server's version.`,
      EXIT.failed,
      'version_mismatch',
    );
  }

  /**
   * The error for an answer that is not this API's, told by the server's OpenAPI document: "not
   * <identity>" when it describes another API or there is none; `ifSame` when it is this API
   * (a proxy answered, or the versions differ); `ifUnknown` (else "not <identity>") when the
   * document could not be fetched either.
   */
  async wrongServer(oddity: Oddity, ifSame: CliError, ifUnknown?: CliError): Promise<CliError> {
    const identity = this.#identity;
    const probe = await this.#probe();
    if (probe.is === 'same') return ifSame;
    if (probe.is === 'unknown' && ifUnknown) return ifUnknown;
    return new CliError(
      `${this.server} is not ${identity.name}: ${oddity.method} ${oddity.route} answered ${oddity.answered}, and ${probe.is === 'other' ? probe.what : `GET ${identity.documentPath} did not answer either`}. Check the address (--server, or the variable that sets it) and its port.`,
      EXIT.unreachable,
      identity === KENNEL_PLATFORM ? 'not_kennel' : 'not_the_api',
    );
  }

  /** What the server's OpenAPI document says it is; `unknown` when it fails or does not answer. */
  async #probe(): Promise<{ is: 'same' } | { is: 'other'; what: string } | { is: 'unknown' }> {
    const { documentPath, title } = this.#identity;
    let response: Response;
    let document: unknown;
    try {
      response = await fetch(`${this.server}${documentPath}`, {
        headers: { accept: 'application/json', 'user-agent': this.#userAgent },
        signal: AbortSignal.timeout(Math.min(this.#timeoutMs, PROBE_TIMEOUT_MS)),
      });
      if (response.status >= 500) return { is: 'unknown' };
      document = await response.json().catch(() => undefined);
    } catch {
      return { is: 'unknown' };
    }
    const found = (document as { info?: { title?: unknown } } | undefined)?.info?.title;
    if (response.ok && found === title) return { is: 'same' };
    return {
      is: 'other',
      what:
        response.ok && typeof found === 'string'
          ? `its ${documentPath} describes "${found}"`
          : `GET ${documentPath} answered ${response.status}, not the ${title}'s document`,
    };
  }
}
