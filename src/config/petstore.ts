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
} as const;

export type PetstoreConfig = ValuesOf<typeof petstoreSettings>;

export function loadPetstoreConfig(env: Record<string, string | undefined>): PetstoreConfig {
  const config = readSettings(petstoreSettings, env);
  if (config.sunsetAt.getTime() <= config.deprecatedAt.getTime()) {
    throw new ConfigError(
      `Invalid configuration:\n  - PETSTORE_GET_PET_SUNSET (${config.sunsetAt.toISOString().slice(0, 10)}) must be after PETSTORE_GET_PET_DEPRECATED_AT (${config.deprecatedAt.toISOString().slice(0, 10)})`,
    );
  }
  return config;
}
