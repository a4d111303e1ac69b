/**
 * The error shape every Kennel HTTP interface answers with: `{ code, message, status }`.
 *
 * A service declares its codes once, in a catalog (code → HTTP status + what it means), and raises
 * them with `catalog.error(code, message)`. The message is public and says what to do next; the
 * internal cause, if any, stays on `cause` and is only logged.
 */
export interface ErrorSpec {
  readonly status: number;
  /** What the code means, for docs/errors.md and the OpenAPI document. */
  readonly meaning: string;
}

/**
 * Codes that answer with one status, by what each means: `withStatus(404, { pet_not_found: '…' })`.
 * A catalog spreads one such group per status.
 */
export function withStatus<Code extends string>(
  status: number,
  meanings: Readonly<Record<Code, string>>,
): Record<Code, ErrorSpec> {
  return Object.fromEntries(
    Object.entries<string>(meanings).map(([code, meaning]) => [code, { status, meaning }]),
  ) as Record<Code, ErrorSpec>;
}

export interface ErrorBody {
  code: string;
  message: string;
  status: number;
}

export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  /** Extra response headers (Allow, Retry-After, WWW-Authenticate…). */
  readonly headers: Readonly<Record<string, string>>;
  /** Fields the body carries besides code, message and status (a refused deploy's `changes`). */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(
    code: string,
    status: number,
    message: string,
    options: { headers?: Record<string, string>; cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    // An answer to the client, not a fault in the server: a 4xx is never logged with a stack, and
    // capturing one cost about 7% of the CPU of answering a flood of malformed bodies. A 5xx keeps
    // its stack for the log.
    const stackTraceLimit = Error.stackTraceLimit;
    if (status < 500) Error.stackTraceLimit = 0;
    try {
      super(message, { cause: options.cause });
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
    this.name = 'ApiError';
    this.code = code;
    this.status = status;
    this.headers = options.headers ?? {};
    this.details = options.details ?? {};
  }

  toBody(): ErrorBody {
    return { ...this.details, code: this.code, message: this.message, status: this.status };
  }
}

export interface ErrorCatalog<Code extends string> {
  readonly specs: Readonly<Record<Code, ErrorSpec>>;
  error(
    code: Code,
    message: string,
    options?: { headers?: Record<string, string>; cause?: unknown; details?: Record<string, unknown> },
  ): ApiError;
  has(code: string): code is Code;
}

export function defineErrorCatalog<Code extends string>(specs: Record<Code, ErrorSpec>): ErrorCatalog<Code> {
  const frozen = Object.freeze({ ...specs });
  return {
    specs: frozen,
    error(code, message, options) {
      return new ApiError(code, frozen[code].status, message, options);
    },
    has(code: string): code is Code {
      return Object.hasOwn(frozen, code);
    },
  };
}
