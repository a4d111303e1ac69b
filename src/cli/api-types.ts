/**
 * The management API's bodies as the CLI reads them (the schemas of its OpenAPI document,
 * /api/v1/openapi.json). Declared here rather than imported, because the CLI talks to the
 * platform over HTTP only and may run against another version of it.
 */
export interface Me {
  email: string;
  isAdmin: boolean;
}

export interface SessionBody extends Me {
  csrfToken: string;
  expiresAt: string;
}

export interface TokenInfo {
  id: number;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt?: string | null;
}

export interface CreatedToken extends TokenInfo {
  token: string;
}

export interface Team {
  id: number;
  name: string;
  plan: string;
  role?: 'owner' | 'member' | null;
}

export interface Member {
  email: string;
  role: 'owner' | 'member';
}

export interface Project {
  slug: string;
  name: string;
  teamId: number;
  originUrl: string;
  plan: string;
  defaultHost: string;
  activeDeployId?: number | null;
  primaryDomain?: string | null;
}

export interface Deploy {
  id: number;
  status: 'succeeded' | 'failed';
  originUrl: string;
  sourceFormat: 'json' | 'yaml';
  problems: string[];
  active: boolean;
  createdAt: string;
}

export interface DnsRecord {
  type: string;
  name: string;
  value: string;
  ttl: number;
  role: 'required' | 'alternative' | 'ownership';
  note?: string;
}

export interface Domain {
  hostname: string;
  unicode: string;
  project: string;
  kind: 'apex' | 'subdomain';
  state: 'unverified' | 'verified' | 'misconfigured' | 'removed';
  reason?: string | null;
  message?: string | null;
  remedy?: string | null;
  records: DnsRecord[];
  verifiedAt?: string | null;
  lastCheckedAt?: string | null;
  nextCheckAt?: string | null;
  checksUntil?: string | null;
  createdAt: string;
  reverifyAvailableAt?: string | null;
  reverifyAvailable?: boolean;
  /** The one word to show: unverified, verified, issuing, live, failed. */
  status?: 'unverified' | 'verified' | 'issuing' | 'live' | 'failed';
  failure?: { reason: string; message: string | null; remedy: string } | null;
  certificate?: {
    state: 'none' | 'pending' | 'ordering' | 'issued' | 'failed';
    reason?: string | null;
    notAfter?: string | null;
    nextAttemptAt?: string | null;
  } | null;
}

export interface DnsOutcome {
  ok: boolean;
  reason: string;
  message: string;
  remedy: string;
  found?: Record<string, unknown>;
}

export interface AddedDomain {
  domain: Domain;
  warnings: { code?: string; message?: string }[];
  dns: { check?: DnsOutcome; caa?: DnsOutcome };
}

export interface CheckResult {
  domain: Domain;
  outcome: DnsOutcome;
}

export interface DomainEvent {
  at: string;
  actor: string;
  action: string;
  outcome: string;
  detail?: Record<string, unknown> | null;
  /** The webhook event the entry sent, and its delivery state. */
  webhook?: { id: string; type: string; state: string; attempts: number; deliveredAt: string | null } | null;
}

export interface DomainDetail {
  domain: Domain;
  history: DomainEvent[];
}

export interface ApplyResult {
  added: string[];
  removed: string[];
  yaml: string;
}

export interface WebhookEndpoint {
  teamId: number;
  url: string;
  secretHint: string;
  createdAt: string;
  updatedAt: string;
}

export interface WebhookEndpointSet {
  endpoint: WebhookEndpoint;
  /** Only when created or rotated: shown this once. */
  secret: string | null;
}

export interface WebhookDelivery {
  id: string;
  type: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt?: string | null;
  lastStatus?: number | null;
  lastError?: string | null;
  createdAt: string;
  deliveredAt?: string | null;
  payload: Record<string, unknown>;
  log: {
    attempt: number;
    at: string;
    statusCode: number | null;
    durationMs: number;
    error: string | null;
    ok: boolean;
  }[];
}

export interface TeamMember {
  userId: number;
  email: string;
  name: string | null;
  role: 'owner' | 'member';
  since: string;
}

export interface Invitation {
  id: number;
  teamId: number;
  email: string;
  role: 'member';
  createdAt: string;
  expiresAt: string;
  status: 'pending' | 'accepted' | 'revoked' | 'expired';
}

export interface CreatedInvitation extends Invitation {
  token: string;
  mailed: boolean;
}

export interface AcceptedInvitation {
  email: string;
  teamId: number;
  role: 'member';
}

export interface PasswordResetLink {
  userId: number;
  email: string;
  token: string;
  expiresAt: string;
}
