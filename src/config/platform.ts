import { normaliseOrigin } from '../lib/address-policy.ts';
import { ConfigError, parse, readSettings, storageSettings, type ValuesOf } from './settings.ts';

const list = (itemParse: (raw: string) => string) => (raw: string) =>
  raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map(itemParse);

const ipv4 = (raw: string) => {
  if (!/^(\d{1,3})(\.\d{1,3}){3}$/.test(raw) || raw.split('.').some((o) => Number(o) > 255)) {
    throw new Error(`"${raw}" is not an IPv4 address`);
  }
  return raw;
};
const ipv6 = (raw: string) => {
  if (!/^[0-9a-fA-F:]+$/.test(raw) || !raw.includes(':')) throw new Error(`"${raw}" is not an IPv6 address`);
  return raw.toLowerCase();
};
const dnsServer = (raw: string) => {
  if (!/^(\[[0-9a-fA-F:]+\]|[\d.]+)(:\d{1,5})?$/.test(raw)) {
    throw new Error(`"${raw}" is not a DNS server (write 1.1.1.1, 127.0.0.1:5353 or [::1]:53)`);
  }
  return raw;
};
const duration = (raw: string): number => {
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(raw);
  if (!match) throw new Error('expected a duration such as 500ms, 30s, 30m, 48h or 2d');
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 'ms'];
  return Number(match[1]) * unit;
};
/** A duration from `min` to `max`, the bounds written as the setting is (`100ms`, `1h`). */
const durationWithin = (min: string, max: string) => {
  const [low, high] = [duration(min), duration(max)];
  return (raw: string): number => {
    const ms = duration(raw);
    if (ms < low || ms > high) throw new Error(`expected a duration from ${min} to ${max}`);
    return ms;
  };
};
/** A size in bytes: 6291456, 512KiB, 6MiB or 1GiB; `min`/`max` bound it. */
const byteSize =
  (min: number, max: number) =>
  (raw: string): number => {
    const match = /^(\d+)(KiB|MiB|GiB)?$/.exec(raw);
    if (!match) throw new Error('expected a size in bytes such as 6291456, 512KiB, 32MiB or 1GiB');
    const unit = { KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 }[match[2] as 'KiB'] ?? 1;
    const bytes = Number(match[1]) * unit;
    if (bytes < min || bytes > max) throw new Error(`expected a size from ${min} to ${max} bytes`);
    return bytes;
  };
/** A request body or a parsed document: 64KiB to 1GiB. */
const bodySize = byteSize(64 * 1024, 1024 ** 3);
/** A switch, written on or off. */
const onOff = (raw: string): boolean => {
  if (raw !== 'on' && raw !== 'off') throw new Error('expected on or off');
  return raw === 'on';
};
const acmeDirectory = (raw: string) => {
  if (!/^https:\/\/\S+$/.test(raw)) throw new Error('expected an https:// URL of an ACME directory');
  return raw;
};
const smtpServer = (raw: string) => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('expected smtp://host:port or smtps://host:port');
  }
  if ((url.protocol !== 'smtp:' && url.protocol !== 'smtps:') || !url.hostname)
    throw new Error('expected smtp://host:port or smtps://host:port');
  return raw;
};
const domainName = (raw: string) => {
  const name = raw.toLowerCase().replace(/\.$/, '');
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(name)) {
    throw new Error('expected a domain name such as kennel.example.com');
  }
  return name;
};

/** Everything the platform reads from its environment, with defaults in one place. */
export const platformSettings = {
  httpPort: {
    env: 'HTTP_PORT',
    description: 'Port of the platform (dashboard, management API)',
    default: 8080,
    parse: parse.port,
  },
  host: {
    env: 'HOST',
    description: 'Address the platform listens on',
    default: '127.0.0.1',
    parse: parse.host,
  },
  httpsPort: { env: 'HTTPS_PORT', description: 'HTTPS port of the edge', default: 8443, parse: parse.port },
  certificateKeys: {
    env: 'CERT_KEYS',
    description:
      'Keys sealing certificate private keys and webhook signing secrets, id:base64(32 bytes), comma-separated, the first seals; unset = a key file in DATA_DIR',
    default: [] as string[],
    parse: list((raw) => {
      const [id, key] = raw.split(':');
      if (!id || !key || Buffer.from(key, 'base64').length !== 32) {
        throw new Error('expected id:key with a base64 32-byte key, e.g. k1:$(openssl rand -base64 32)');
      }
      return raw;
    }),
  },
  acmeDirectoryUrl: {
    env: 'ACME_DIRECTORY_URL',
    description:
      'An ACME directory (e.g. https://acme-v02.api.letsencrypt.org/directory); unset = the internal CA',
    default: undefined as string | undefined,
    parse: acmeDirectory,
  },
  acmeEmail: {
    env: 'ACME_EMAIL',
    description: 'Contact email of the ACME account',
    default: '',
    parse: parse.string,
  },
  acmeEabKid: {
    env: 'ACME_EAB_KID',
    description: 'External Account Binding key id (optional)',
    default: '',
    parse: parse.string,
  },
  acmeEabHmacKey: {
    env: 'ACME_EAB_HMAC_KEY',
    description: 'External Account Binding HMAC key, base64url (optional)',
    default: '',
    parse: parse.string,
  },
  acmeCaFile: {
    env: 'ACME_CA_FILE',
    description: 'A PEM file of an extra CA to trust for the ACME API itself (a test CA like Pebble)',
    default: '',
    parse: parse.string,
  },
  certificateCheckEveryMs: {
    env: 'CERT_CHECK_EVERY',
    description: 'How often the certificate job looks for orders, retries and renewals',
    default: 5_000,
    parse: duration,
  },
  nodeName: {
    env: 'NODE_NAME',
    description:
      "This node's name on its machine, kept across restarts, so a restarted node takes back the certificate orders it held (default: the HTTP port)",
    default: '',
    parse: parse.string,
  },
  petstorePort: {
    env: 'PETSTORE_PORT',
    description: 'Port of the Petstore API, the origin of the first project',
    default: 4010,
    parse: parse.port,
  },
  webhookTargets: {
    env: 'WEBHOOK_TARGETS',
    description:
      'Where team webhooks may be delivered: public (public addresses over https) or private (also loopback and private networks; http to loopback); see docs/webhooks.md',
    default: 'public' as const,
    parse: parse.oneOf(['public', 'private'] as const),
  },
  originAllowlist: {
    env: 'KENNEL_ORIGIN_ALLOWLIST',
    description:
      'Private origins the operator’s own team (the first start’s, "Kennel") may use for its projects (scheme://host:port, comma-separated, exact match); the bundled Petstore’s origin is always added; other teams need a platform admin’s origin grant; see docs/security.md',
    default: [] as readonly string[],
    parse: list(normaliseOrigin) as (raw: string) => readonly string[],
  },
  webhookTimeoutMs: {
    env: 'WEBHOOK_TIMEOUT',
    description: 'Time limit of one webhook delivery attempt (connect, send, answer)',
    default: 10_000,
    parse: durationWithin('100ms', '60s'),
  },
  logLevel: {
    env: 'LOG_LEVEL',
    description: 'Log level of the JSON logs',
    default: 'info' as const,
    parse: parse.oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const),
  },
  domainCheckEveryMs: {
    env: 'DOMAIN_CHECK_EVERY',
    description: 'How often the background checker looks for due domain checks',
    default: 15_000,
    parse: duration,
  },
  platformDomain: {
    env: 'PLATFORM_DOMAIN',
    description: 'The platform domain: dashboard at it, projects at <slug>.<it>',
    default: 'localhost',
    parse: domainName,
  },
  ...storageSettings,
  dnsServers: {
    env: 'DNS_SERVERS',
    description: 'Resolvers used to verify domains (comma-separated); empty = the system resolvers',
    default: [] as string[],
    parse: list(dnsServer),
  },
  platformAddressesV4: {
    env: 'PLATFORM_IPV4',
    description: 'IPv4 addresses of the edge, which apex (ALIAS/ANAME) domains must resolve to',
    default: ['127.0.0.1'],
    parse: list(ipv4),
  },
  platformAddressesV6: {
    env: 'PLATFORM_IPV6',
    description: 'IPv6 addresses of the edge (optional)',
    default: [] as string[],
    parse: list(ipv6),
  },
  caaIdentifier: {
    env: 'CAA_IDENTIFIER',
    description: 'The CA’s CAA issuer domain, checked before ordering certificates',
    default: 'letsencrypt.org',
    parse: domainName,
  },
  propagationWindowMs: {
    env: 'DNS_PROPAGATION_WINDOW',
    description: 'How long unverified domains are re-checked in the background',
    default: 48 * 3_600_000,
    parse: duration,
  },
  reverifyAfterMs: {
    env: 'REVERIFY_AFTER',
    description: 'How long without a certificate before Re-verify is offered',
    default: 30 * 60_000,
    parse: duration,
  },
  recheckIntervalMs: {
    env: 'DOMAIN_RECHECK_INTERVAL',
    description: 'How often verified domains are re-checked',
    default: 6 * 3_600_000,
    parse: duration,
  },
  headersTimeoutMs: {
    env: 'HEADERS_TIMEOUT',
    description:
      'How long a client may take to send a request line and headers before it is answered 408 receive_timeout (the management API, and the edge listeners it is served on)',
    default: 10_000,
    parse: durationWithin('100ms', '10m'),
  },
  receiveTimeoutMs: {
    env: 'RECEIVE_TIMEOUT',
    description:
      'How long a client may take to send a whole request, body included (a deploy document may be as large as DEPLOY_BODY_LIMIT), before it is answered 408 receive_timeout; at least HEADERS_TIMEOUT',
    default: 60_000,
    parse: durationWithin('100ms', '1h'),
  },
  apiBodyLimitBytes: {
    env: 'API_BODY_LIMIT',
    description:
      'The largest request body the management API reads, deploys excepted (DEPLOY_BODY_LIMIT); larger bodies are answered 413 body_too_large',
    default: 6 * 1024 * 1024,
    parse: bodySize,
  },
  deployBodyLimitBytes: {
    env: 'DEPLOY_BODY_LIMIT',
    description:
      "The largest request body a deploy (createDeploy) may send, its document included (GitHub's REST description is 13 MB as shipped); larger bodies are answered 413 body_too_large. Other management requests keep API_BODY_LIMIT",
    default: 32 * 1024 * 1024,
    parse: bodySize,
  },
  deployMaxExpandedBytes: {
    env: 'DEPLOY_MAX_EXPANDED_SIZE',
    description:
      'The largest a deployed document may be once parsed, its YAML aliases expanded, as minified JSON; larger is refused 413 document_too_large before anything is stored',
    default: 32 * 1024 * 1024,
    parse: bodySize,
  },
  deployMaxYamlAliases: {
    env: 'DEPLOY_MAX_YAML_ALIASES',
    description:
      'How many aliases (*name) a YAML document may hold, nested ones counted as yaml counts them; more is refused 422 document_too_complex',
    default: 100,
    parse: parse.integer(0, 100_000),
  },
  deployMaxDepth: {
    env: 'DEPLOY_MAX_DEPTH',
    description:
      'How deeply a deployed document may nest objects and arrays; deeper (or a YAML alias inside its own anchor) is refused 422 document_too_complex',
    default: 128,
    parse: parse.integer(8, 10_000),
  },
  deployMaxPaths: {
    env: 'DEPLOY_MAX_PATHS',
    description: 'How many paths a deployed document may have; more is refused 422 document_too_complex',
    default: 10_000,
    parse: parse.integer(1, 10_000_000),
  },
  deployMaxOperations: {
    env: 'DEPLOY_MAX_OPERATIONS',
    description:
      'How many operations (paths and webhooks) a deployed document may have; more is refused 422 document_too_complex',
    default: 20_000,
    parse: parse.integer(1, 10_000_000),
  },
  deployRetention: {
    env: 'DEPLOY_RETENTION',
    description:
      'How many of its latest deploys a project keeps (the live one is always kept too); older ones are deleted with each new deploy',
    default: 50,
    parse: parse.integer(1, 100_000),
  },
  trafficRecording: {
    env: 'TRAFFIC_RECORDING',
    description:
      "on = the edge records each API request's operation, caller, status, bytes and latency (docs/security.md, Traffic); off = nothing is recorded",
    default: true,
    parse: onOff,
  },
  trafficFlushSeconds: {
    env: 'TRAFFIC_FLUSH_SECONDS',
    description: 'How often each edge node writes its traffic counts (one transaction per node)',
    default: 10,
    parse: parse.integer(1, 300),
  },
  trafficRetentionDays: {
    env: 'TRAFFIC_RETENTION_DAYS',
    description: 'How many days hourly traffic and callers are kept (minutes: 48 h, then rolled into hours)',
    default: 30,
    parse: parse.integer(1, 3650),
  },
  requestLogSize: {
    env: 'REQUEST_LOG_SIZE',
    description:
      'How many of its latest requests each project keeps in its request log, per edge node; 0 = none',
    default: 1000,
    parse: parse.integer(0, 100_000),
  },
  trafficMaxCallers: {
    env: 'TRAFFIC_MAX_CALLERS',
    description:
      'Distinct callers (caller × operation) an edge node counts apart per flush window; past it they count as "other"',
    default: 10_000,
    parse: parse.integer(1, 1_000_000),
  },
  trafficMaxOperations: {
    env: 'TRAFFIC_MAX_OPERATIONS',
    description:
      'Distinct operations a project counts apart per minute on a node; past it they count as "other"',
    default: 500,
    parse: parse.integer(1, 100_000),
  },
  shutdownTimeoutMs: {
    env: 'SHUTDOWN_TIMEOUT',
    description:
      'On SIGTERM/SIGINT, how long requests in flight may take to finish before their connections are cut',
    default: 30_000,
    parse: duration,
  },
  metricsPort: {
    env: 'METRICS_PORT',
    description: 'Port of the operator listener (/metrics, /healthz, /readyz); off = none',
    default: 9464 as number | 'off',
    parse: (raw: string): number | 'off' => {
      if (raw === 'off') return 'off';
      if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535)
        throw new Error('expected a port from 0 to 65535, or off');
      return Number(raw);
    },
  },
  metricsHost: {
    env: 'METRICS_HOST',
    description: 'Address of the operator listener; keep it private (metrics name every project)',
    default: '127.0.0.1',
    parse: parse.host,
  },
  adminEmail: {
    env: 'KENNEL_ADMIN_EMAIL',
    description: 'Email of the admin bootstrapped on first start',
    default: 'admin@localhost',
    parse: parse.string,
  },
  openSignUp: {
    env: 'KENNEL_OPEN_SIGNUP',
    description:
      'on = anyone who reaches the platform may create an account (POST /api/v1/users), with a team of their own; off = accounts come only from invitations',
    default: false,
    parse: onOff,
  },
  invitationLifetimeMs: {
    env: 'INVITATION_LIFETIME',
    description: 'How long an invitation link works (password reset links: a day)',
    default: 7 * 86_400_000,
    parse: duration,
  },
  smtpUrl: {
    env: 'SMTP_URL',
    description:
      'An SMTP server that mails invitations and "Forgot password?" reset links: smtp://[user:password@]host[:port] (STARTTLS when offered; port 587 by default) or smtps://… (TLS, 465); unset = invitations are not mailed, the owner passes the token on, and a forgotten password is reset by a team owner or the operator',
    default: undefined as string | undefined,
    parse: smtpServer,
  },
  smtpFrom: {
    env: 'SMTP_FROM',
    description: 'The From address of mailed invitations (default kennel@<PLATFORM_DOMAIN>)',
    default: '',
    parse: parse.string,
  },
  adminPassword: {
    env: 'KENNEL_ADMIN_PASSWORD',
    description: 'Password of the bootstrapped admin; generated and printed once when unset',
    default: undefined as string | undefined,
    parse: parse.string,
  },
} as const;

export type PlatformConfig = ValuesOf<typeof platformSettings>;

export function loadPlatformConfig(env: Record<string, string | undefined>): PlatformConfig {
  const config = readSettings(platformSettings, env);
  if (config.adminPassword !== undefined && config.adminPassword.length < 12) {
    throw new ConfigError('Invalid configuration:\n  - KENNEL_ADMIN_PASSWORD must be at least 12 characters');
  }
  if (config.receiveTimeoutMs < config.headersTimeoutMs) {
    throw new ConfigError(
      'Invalid configuration:\n  - RECEIVE_TIMEOUT must be at least HEADERS_TIMEOUT: the whole request includes its headers',
    );
  }
  return config;
}

/**
 * The configuration with more origins on KENNEL_ORIGIN_ALLOWLIST: `npm start` adds the Petstore it
 * runs on loopback, so its first project keeps working whatever the operator lists.
 */
export function withAllowedOrigins(config: PlatformConfig, ...origins: string[]): PlatformConfig {
  const added = origins.map(normaliseOrigin).filter((o) => !config.originAllowlist.includes(o));
  return Object.freeze({ ...config, originAllowlist: Object.freeze([...config.originAllowlist, ...added]) });
}
