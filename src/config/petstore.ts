import type { SealingKey } from '../lib/sealed-box.ts';
import { ConfigError, parse, readSettings, storageSettings, type ValuesOf } from './settings.ts';

/** Everything the Petstore API reads from its environment, with defaults in one place. */
export const petstoreSettings = {
  port: { env: 'PORT', description: 'TCP port of the Petstore API', default: 4010, parse: parse.port },
  host: { env: 'HOST', description: 'Address to listen on', default: '127.0.0.1', parse: parse.host },
  ...storageSettings,
  logLevel: {
    env: 'LOG_LEVEL',
    description: 'Log level of the JSON logs',
    default: 'info' as const,
    parse: parse.oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const),
  },
  deprecatedAt: {
    env: 'PETSTORE_GET_PET_DEPRECATED_AT',
    description: 'Date GET /pets/{petId} was deprecated (Deprecation header)',
    default: new Date('2026-11-01T00:00:00Z'),
    parse: parse.date,
  },
  sunsetAt: {
    env: 'PETSTORE_GET_PET_SUNSET',
    description: 'Sunset date of GET /pets/{petId}; it answers 410 from then on',
    default: new Date('2027-06-30T00:00:00Z'),
    parse: parse.date,
  },
  adminKey: {
    env: 'PETSTORE_ADMIN_KEY',
    description:
      'An admin API key (pk_ and 43 base64url characters) registered at start with every scope; without it, the first start prints a new one once',
    default: undefined as string | undefined,
    parse: (raw: string): string | undefined => {
      if (!/^pk_[A-Za-z0-9_-]{43}$/.test(raw)) {
        throw new Error(
          'expected pk_ followed by 43 base64url characters (A-Z a-z 0-9 _ -), e.g. from kennel keys create',
        );
      }
      return raw;
    },
  },
  rateLimitPerKey: {
    env: 'PETSTORE_RATE_LIMIT_PER_KEY',
    description: 'Requests per window for each API key',
    default: 600,
    parse: parse.integer(1, 100_000_000),
  },
  rateLimitPerAddress: {
    env: 'PETSTORE_RATE_LIMIT_PER_ADDRESS',
    description: 'Requests per window for each client address without a key',
    default: 60,
    parse: parse.integer(1, 100_000_000),
  },
  rateLimitWindowSeconds: {
    env: 'PETSTORE_RATE_LIMIT_WINDOW_SECONDS',
    description: 'Length of the rate-limit window in seconds',
    default: 60,
    parse: parse.integer(1, 86_400),
  },
  rateLimitScope: {
    env: 'PETSTORE_RATE_LIMIT_SCOPE',
    description:
      'Where rate limits are counted: cluster (one count shared by every process on the PostgreSQL database), node (each process alone), or auto (cluster on PostgreSQL, node on SQLite)',
    default: 'auto' as const,
    parse: parse.oneOf(['auto', 'node', 'cluster'] as const),
  },
  rateLimitLease: {
    env: 'PETSTORE_RATE_LIMIT_LEASE',
    description:
      "Cluster scope: the most requests a process takes from a caller's shared count at once (at most a twentieth of the quota); at most (N − 1) × (lease + ⌊lease/2⌋) of a quota can go unused across N processes",
    default: 100,
    parse: parse.integer(1, 1_000_000),
  },
  rateLimit: {
    env: 'PETSTORE_RATE_LIMIT',
    description: 'on, or off to turn rate limiting off (benchmarks)',
    default: 'on' as const,
    parse: parse.oneOf(['on', 'off'] as const),
  },
  authentication: {
    env: 'PETSTORE_AUTHENTICATION',
    description: 'on, or off to make every operation public: for benchmarks only, never in production',
    default: 'on' as const,
    parse: parse.oneOf(['on', 'off'] as const),
  },
  requestTimeoutMs: {
    env: 'PETSTORE_REQUEST_TIMEOUT_MS',
    description: 'How long a request may run before it is answered 503 request_timeout',
    default: 10_000,
    parse: parse.integer(100, 600_000),
  },
  headersTimeoutMs: {
    env: 'PETSTORE_HEADERS_TIMEOUT_MS',
    description:
      'How long a client may take to send a request line and headers before it is answered 408 receive_timeout',
    default: 10_000,
    parse: parse.integer(100, 600_000),
  },
  receiveTimeoutMs: {
    env: 'PETSTORE_RECEIVE_TIMEOUT_MS',
    description:
      'How long a client may take to send a whole request, body included, before it is answered 408 receive_timeout; at least PETSTORE_HEADERS_TIMEOUT_MS',
    default: 30_000,
    parse: parse.integer(100, 3_600_000),
  },
  idempotencyHours: {
    env: 'PETSTORE_IDEMPOTENCY_HOURS',
    description: 'How long an Idempotency-Key is remembered',
    default: 24,
    parse: parse.integer(1, 720),
  },
  secretKeys: {
    env: 'PETSTORE_SECRET_KEYS',
    description:
      'Keys sealing webhook signing secrets, id:base64(32 bytes), comma-separated, the first seals; unset = the key file petstore.key in DATA_DIR',
    default: [] as string[],
    parse: (raw: string): string[] =>
      raw
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '')
        .map((item) => {
          const [id, key] = item.split(':');
          if (!id || !key || !/^[\w-]{1,32}$/.test(id) || Buffer.from(key, 'base64').length !== 32) {
            throw new Error('expected id:key with a base64 32-byte key, e.g. k1:$(openssl rand -base64 32)');
          }
          return item;
        }),
  },
  webhookTargets: {
    env: 'PETSTORE_WEBHOOK_TARGETS',
    description:
      'Where webhook subscriptions may point: public (public addresses over https) or private (also loopback and private networks; http to loopback)',
    default: 'public' as const,
    parse: parse.oneOf(['public', 'private'] as const),
  },
  webhookTimeoutMs: {
    env: 'PETSTORE_WEBHOOK_TIMEOUT_MS',
    description: 'Time limit of one webhook delivery attempt (connect, send, answer), in milliseconds',
    default: 10_000,
    parse: parse.integer(100, 60_000),
  },
  keyCacheSeconds: {
    env: 'PETSTORE_KEY_CACHE_SECONDS',
    description:
      'How long a process trusts a looked-up API key (a revocation elsewhere takes this long to apply)',
    default: 10,
    parse: parse.integer(0, 3600),
  },
} as const;

export type PetstoreConfig = ValuesOf<typeof petstoreSettings>;

export function loadPetstoreConfig(env: Record<string, string | undefined>): PetstoreConfig {
  const config = readSettings(petstoreSettings, env);
  if (config.sunsetAt.getTime() <= config.deprecatedAt.getTime()) {
    throw new ConfigError(
      `Invalid configuration:\n  - PETSTORE_GET_PET_SUNSET (${config.sunsetAt.toISOString().slice(0, 10)}) must be after PETSTORE_GET_PET_DEPRECATED_AT (${config.deprecatedAt.toISOString().slice(0, 10)})`,
    );
  }
  if (config.receiveTimeoutMs < config.headersTimeoutMs) {
    throw new ConfigError(
      `Invalid configuration:\n  - PETSTORE_RECEIVE_TIMEOUT_MS (${config.receiveTimeoutMs}) must be at least PETSTORE_HEADERS_TIMEOUT_MS (${config.headersTimeoutMs}): the whole request includes its headers`,
    );
  }
  if (config.rateLimitScope === 'cluster' && config.databaseUrl === undefined) {
    throw new ConfigError(
      'Invalid configuration:\n  - PETSTORE_RATE_LIMIT_SCOPE=cluster needs a PostgreSQL database shared by the processes: set DATABASE_URL, or use node (or auto) on SQLite',
    );
  }
  return config;
}

/** The limits and switches `buildPetstoreApp` takes, from the configuration. */
export function petstoreAppSettings(config: PetstoreConfig) {
  const windowSeconds = config.rateLimitWindowSeconds;
  return {
    limits: {
      perKey: { quota: config.rateLimitPerKey, windowSeconds },
      perAddress: { quota: config.rateLimitPerAddress, windowSeconds },
      rateLimitLease: config.rateLimitLease,
      requestTimeoutMs: config.requestTimeoutMs,
      headersTimeoutMs: config.headersTimeoutMs,
      receiveTimeoutMs: config.receiveTimeoutMs,
      idempotencyTtlMs: config.idempotencyHours * 3_600_000,
      keyCacheMs: config.keyCacheSeconds * 1000,
    },
    rateLimit: config.rateLimit === 'on',
    rateLimitScope: config.rateLimitScope,
    authentication: config.authentication === 'on',
  };
}

/** The webhook settings `buildPetstoreApp` takes, given the sealing keys (see src/main). */
export function petstoreWebhookSettings(config: PetstoreConfig, keys: readonly SealingKey[]) {
  return { keys, targets: config.webhookTargets, timeoutMs: config.webhookTimeoutMs };
}
