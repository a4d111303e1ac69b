/**
 * Settings are read once at boot from the environment, each through a parser that says what is
 * allowed, then frozen and passed down. Nothing else reads `process.env`.
 */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export interface Setting<T> {
  /** The environment variable. */
  readonly env: string;
  readonly description: string;
  readonly default: T | (() => T);
  /** Parses a raw value or throws with what is allowed (without the setting's name). */
  readonly parse: (raw: string) => T;
}

export type Settings = Record<string, Setting<unknown>>;
export type ValuesOf<S extends Settings> = {
  readonly [K in keyof S]: S[K] extends Setting<infer T> ? T : never;
};

/** Reads every setting; collects all problems so one start reports them all. */
export function readSettings<S extends Settings>(
  spec: S,
  env: Record<string, string | undefined>,
): ValuesOf<S> {
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, setting] of Object.entries(spec)) {
    const raw = env[setting.env];
    if (raw === undefined || raw === '') {
      values[key] =
        typeof setting.default === 'function' ? (setting.default as () => unknown)() : setting.default;
      continue;
    }
    try {
      values[key] = setting.parse(raw);
    } catch (error) {
      problems.push(`${setting.env}=${JSON.stringify(raw)} is not valid: ${(error as Error).message}`);
    }
  }
  if (problems.length > 0) {
    throw new ConfigError(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
  return Object.freeze(values) as ValuesOf<S>;
}

export const parse = {
  port(raw: string): number {
    if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535)
      throw new Error('expected a port number from 0 to 65535');
    return Number(raw);
  },
  integer(min: number, max: number) {
    return (raw: string): number => {
      if (!/^-?\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
        throw new Error(`expected a whole number from ${min} to ${max}`);
      }
      return Number(raw);
    };
  },
  oneOf<T extends string>(allowed: readonly T[]) {
    return (raw: string): T => {
      if (!(allowed as readonly string[]).includes(raw))
        throw new Error(`expected one of: ${allowed.join(', ')}`);
      return raw as T;
    };
  },
  string(raw: string): string {
    return raw;
  },
  /** A calendar date, `YYYY-MM-DD`, taken as midnight UTC. */
  date(raw: string): Date {
    const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(raw);
    const date = new Date(`${raw}T00:00:00Z`);
    if (!match || Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== raw) {
      throw new Error('expected a date written YYYY-MM-DD, e.g. 2027-06-30');
    }
    return date;
  },
  databaseUrl(raw: string): string {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new Error('expected a postgres://user@host:port/database URL');
    }
    if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
      throw new Error(
        'expected a postgres:// or postgresql:// URL (leave it unset to use SQLite in DATA_DIR)',
      );
    }
    return raw;
  },
  host(raw: string): string {
    if (!/^[A-Za-z0-9.:[\]-]+$/.test(raw)) throw new Error('expected a hostname or IP address to listen on');
    return raw;
  },
} as const;

/** Where a service keeps its data: the same two settings for the Petstore and the platform. */
export const storageSettings = {
  dataDir: {
    env: 'DATA_DIR',
    description: 'Directory of the SQLite files (and, for the platform, keys and certificates)',
    default: './data',
    parse: parse.string,
  },
  databaseUrl: {
    env: 'DATABASE_URL',
    description: 'A postgres:// URL switches storage to PostgreSQL',
    default: undefined as string | undefined,
    parse: parse.databaseUrl,
  },
} as const;
