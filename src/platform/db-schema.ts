import { type Generated, sql } from 'kysely';
import {
  booleanColumnType,
  createOutboxTables,
  type DialectMigration,
  idColumnType,
  type OutboxAttemptTable,
  type OutboxMessageTable,
  type OutboxTables,
} from '../storage/index.ts';
import type { PlanName } from './plans.ts';

/**
 * The values a text column may hold, as literal unions (Kysely then types the rows they are read
 * into, so no reader casts): declared here, below every module that reads the tables, and
 * re-exported where each one's rules live.
 */
/** A domain's lifecycle state; the table of transitions is domains/lifecycle.ts. */
export type DomainState = 'unverified' | 'verified' | 'misconfigured' | 'removed';
/** What the certificate job does next (certificates/certificate-states.ts). */
export type CertificateState = 'pending' | 'ordering' | 'issued' | 'failed';
/** A member's role in a team, and the role an invitation joins with. */
export type Role = 'owner' | 'member';
/** What a token may do: `full`, everything its account may; `read`, GET and HEAD only. */
export type TokenScope = 'full' | 'read';
export type DeployStatus = 'succeeded' | 'failed';
/** How a deploy's document was uploaded (and is stored). */
export type SourceFormat = 'json' | 'yaml';

/**
 * The control plane's tables. Timestamps are ISO 8601 UTC text in both dialects; secrets are
 * stored only as hashes (passwords: scrypt; tokens and sessions: SHA-256 of a random value).
 */
export interface PlatformTables {
  users: {
    id: Generated<number>;
    email: string;
    password_hash: string;
    is_admin: number | boolean;
    created_at: string;
    /** The name given when accepting an invitation or signing up (null for older accounts). */
    name: string | null;
    /**
     * When the account's email was proved: its holder followed a link mailed to it, or the
     * operator made the account. Null: never proved (docs/decisions/accounts-and-sign-in.md, "Proved emails").
     */
    email_proved_at: string | null;
  };
  /** An invitation to join a team: the link's token is stored only as its SHA-256. */
  invitations: {
    id: Generated<number>;
    team_id: number;
    email: string;
    token_hash: string;
    invited_by: number;
    created_at: string;
    expires_at: string;
    accepted_at: string | null;
    revoked_at: string | null;
    /** When the SMTP server took the invitation's mail (null: the owner passes the link on). */
    mailed_at: string | null;
    /** The role the invitee joins with (owner or member). */
    role: Generated<Role>;
  };
  /** A one-time password reset link for one account, stored only as its SHA-256. */
  password_resets: {
    id: Generated<number>;
    user_id: number;
    token_hash: string;
    created_by: number | null;
    created_at: string;
    expires_at: string;
    used_at: string | null;
    /**
     * The address a "Forgot password?" link was mailed to (the account asked for it itself);
     * null for a link an owner or admin made. The link holds while the account keeps that email.
     */
    mailed_to: string | null;
  };
  teams: { id: Generated<number>; name: string; plan: PlanName; created_at: string };
  memberships: { team_id: number; user_id: number; role: Role; created_at: string };
  sessions: {
    id_hash: string;
    user_id: number;
    csrf_token: string;
    created_at: string;
    expires_at: string;
  };
  api_tokens: {
    id: Generated<number>;
    user_id: number;
    name: string;
    token_hash: string;
    prefix: string;
    created_at: string;
    last_used_at: string | null;
    revoked_at: string | null;
    /** When the token stops working (null: never). */
    expires_at: string | null;
    /** full: everything its account may do; read: GET and HEAD only. */
    scope: Generated<TokenScope>;
  };
  projects: {
    id: Generated<number>;
    team_id: number;
    slug: string;
    name: string;
    origin_url: string;
    active_deploy_id: number | null;
    primary_domain: string | null;
    created_at: string;
  };
  deploys: {
    id: Generated<number>;
    project_id: number;
    status: DeployStatus;
    origin_url: string;
    document: string | null;
    source_format: SourceFormat;
    problems: string | null;
    created_by: number | null;
    created_at: string;
    /** Counts the project's deploys from 1 (0009_deploy_changes). */
    number: number;
    /** 1: a preview, which never changes the live site (src/platform/projects/deploys.ts). */
    preview: number;
    /** JSON Change[] against the deploy live when it was made; null without a document or a live deploy. */
    changes: string | null;
    /** 1 when `changes` holds a breaking change. */
    breaking: number;
  };
  /**
   * Each time a project's live deploy changed (a deploy going live, a promotion), with the changes
   * against the deploy live before: the changelog. Rows keep their own copy of the changes and the
   * deploy's number, so they outlive the deploy's pruning (deploy_id then names no deploy).
   */
  publications: {
    id: Generated<number>;
    project_id: number;
    deploy_id: number;
    deploy_number: number;
    published_at: string;
    published_by: number | null;
    changes: string;
    breaking: number;
  };
  domains: {
    id: Generated<number>;
    project_id: number;
    hostname: string;
    state: DomainState;
    is_apex: number | boolean;
    ownership_token: string;
    reason: string | null;
    reason_detail: string | null;
    verified_at: string | null;
    last_checked_at: string | null;
    next_check_at: string | null;
    check_attempts: number;
    checks_until: string | null;
    created_at: string;
    removed_at: string | null;
  };
  domain_events: {
    id: Generated<number>;
    domain_id: number;
    actor: string;
    action: string;
    outcome: string;
    detail: string | null;
    at: string;
  };
  redirects: {
    project_id: number;
    from_host: string;
    to_host: string;
    status: number;
  };
  /**
   * The current certificate of each hostname (one row per hostname, replaced on renewal), owned by
   * the domain (project, hostname) that ordered it: only that domain's removal drops it.
   */
  certificates: {
    hostname: string;
    domain_id: number | null;
    issuer: string;
    certificate_pem: string;
    key_sealed: string;
    not_before: string;
    not_after: string;
    created_at: string;
  };
  /** What the certificate job does next for a verified domain, with its lease. */
  certificate_jobs: {
    domain_id: number;
    hostname: string;
    state: CertificateState;
    reason: string | null;
    attempts: number;
    next_attempt_at: string | null;
    /** The node holding the lease (stable across its restarts) and the process on it. */
    lease_owner: string | null;
    lease_instance: string | null;
    /** The last heartbeat plus the lease's length: after it, the holder counts as dead. */
    lease_until: string | null;
    /** When to ask the CA for its renewal window again (RFC 9773); null: the CA offers none. */
    renewal_info_at: string | null;
    updated_at: string;
  };
  acme_challenges: { token: string; key_authorization: string; hostname: string; created_at: string };
  /** Platform-wide secrets and keys (the internal CA), sealed where secret. */
  platform_keys: { name: string; value: string; created_at: string };
  /** A team's webhook endpoint (at most one): the URL and its signing secret, sealed. */
  webhook_endpoints: {
    team_id: number;
    url: string;
    secret_sealed: string;
    created_at: string;
    updated_at: string;
  };
  /**
   * Which team may reach which private origin (src/platform/projects/origin-grants.ts): a
   * normalised origin, or `KENNEL_ORIGIN_ALLOWLIST` for every origin of that setting. granted_by
   * is the platform admin (null: the first start's grant to the bootstrap team).
   */
  origin_grants: {
    id: Generated<number>;
    team_id: number;
    origin: string;
    granted_by: number | null;
    created_at: string;
  };
  /**
   * A project's CORS policy (src/lib/cors-policy.ts), one row once someone sets it; no row is the
   * default, off. The lists are JSON arrays of strings.
   */
  project_cors: {
    project_id: number;
    enabled: number;
    allowed_origins: string;
    allowed_methods: string;
    allowed_headers: string;
    expose_headers: string;
    allow_credentials: number;
    max_age_seconds: number;
    updated_at: string;
  };
  /**
   * A preview's share link (src/platform/previews/): whoever holds its token may open that one
   * preview deploy until it expires or is revoked. The token is stored only as its SHA-256.
   */
  preview_links: {
    id: Generated<number>;
    project_id: number;
    deploy_id: number;
    token_hash: string;
    created_by: number | null;
    created_at: string;
    expires_at: string;
    revoked_at: string | null;
  };
  /**
   * Who may see a preview host: a browser's cookie there (its SHA-256), opened through a share
   * link (`link_id`) or by a team member's hand-off from the platform (`user_id`). A hand-off
   * waits, unexchanged (`exchanged_at` null), for at most a minute; the edge then swaps its token
   * for the cookie's.
   */
  preview_sessions: {
    id: Generated<number>;
    deploy_id: number;
    token_hash: string;
    link_id: number | null;
    user_id: number | null;
    created_at: string;
    expires_at: string;
    exchanged_at: string | null;
  };
  /** The platform's webhook outbox (src/storage/webhook-outbox.ts): endpoint_key is `team:<id>`. */
  webhook_messages: OutboxMessageTable;
  webhook_attempts: OutboxAttemptTable;
  /**
   * Traffic per project × operation × status × minute, written by each edge node for its own
   * rows (src/platform/traffic/write-traffic.ts); readers sum across node_id. `operation` is
   * `METHOD /template`, `unmatched` or `other`; `errors` counts status ≥ 500; `latency` is a
   * LatencySketch's JSON. No foreign key: a batch must not fail for a project deleted meanwhile
   * (the retention job removes orphans).
   */
  traffic_minutes: TrafficSeriesRow & { minute: string };
  /** The same, rolled up from minutes older than 48 h (src/platform/traffic/rollup-traffic.ts). */
  traffic_hours: TrafficSeriesRow & { hour: string };
  /**
   * Who called which operation, per day: `caller` is a keyed hash (HMAC-SHA256 with the traffic
   * key, 32 hex), never the credential; `caller_label` is at most 6 characters of it, or the
   * client's truncated address; `caller_kind` is `key` or `address`.
   */
  traffic_callers: {
    node_id: string;
    project_id: number;
    caller: string;
    caller_label: string;
    caller_kind: string;
    operation: string;
    day: string;
    requests: number;
    errors: number;
    last_seen_at: string;
  };
  /** The last REQUEST_LOG_SIZE requests of each project per node: no bodies, no header values. */
  request_logs: {
    id: Generated<number>;
    node_id: string;
    project_id: number;
    at: string;
    method: string;
    operation: string;
    path: string;
    status: number;
    latency_ms: number;
    bytes_in: number;
    bytes_out: number;
    caller_label: string;
    request_id: string;
  };
  /**
   * The daily `deprecation.still_called` notices sent (src/platform/traffic/deprecation-notices.ts):
   * one row per project, operation and UTC day, so nodes racing send each once.
   */
  traffic_notices: { project_id: number; operation: string; day: string; sent_at: string };
}

/** The columns traffic_minutes and traffic_hours share (their time column apart). */
export interface TrafficSeriesRow {
  node_id: string;
  project_id: number;
  operation: string;
  status: number;
  requests: number;
  errors: number;
  bytes_in: number;
  bytes_out: number;
  latency: string;
}

/** The platform's outbox tables, as `WebhookOutbox` is told. */
export const PLATFORM_OUTBOX: OutboxTables = { messages: 'webhook_messages', attempts: 'webhook_attempts' };

const now = sql`CURRENT_TIMESTAMP`;

export const platformMigrations: Record<string, DialectMigration> = {
  '0017_certificate_renewal_info': {
    async up(db) {
      await db.schema.alterTable('certificate_jobs').addColumn('renewal_info_at', 'text').execute();
    },
  },
  '0015_one_open_invitation': {
    async up(db) {
      // Inviting an email again replaces its open invitation (src/platform/accounts/invitations.ts).
      // Before, each invitation stayed open: of a team's open ones for an email, the newest stays.
      await sql`UPDATE invitations SET revoked_at = ${new Date().toISOString()}
        WHERE accepted_at IS NULL AND revoked_at IS NULL AND id NOT IN (
          SELECT MAX(id) FROM invitations WHERE accepted_at IS NULL AND revoked_at IS NULL
          GROUP BY team_id, email)`.execute(db);
      await sql`CREATE UNIQUE INDEX invitations_one_open ON invitations (team_id, email)
        WHERE accepted_at IS NULL AND revoked_at IS NULL`.execute(db);
    },
  },
  '0014_token_scopes': {
    async up(db) {
      // Tokens made before keep working as they did: full scope, no expiry.
      await db.schema.alterTable('api_tokens').addColumn('expires_at', 'text').execute();
      await db.schema
        .alterTable('api_tokens')
        .addColumn('scope', 'text', (c) => c.notNull().defaultTo('full'))
        .execute();
      await db.schema.alterTable('password_resets').addColumn('mailed_to', 'text').execute();
    },
  },
  '0013_project_cors': {
    async up(db) {
      await db.schema
        .createTable('project_cors')
        .addColumn('project_id', 'bigint', (c) =>
          c.primaryKey().references('projects.id').onDelete('cascade'),
        )
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('allowed_origins', 'text', (c) => c.notNull())
        .addColumn('allowed_methods', 'text', (c) => c.notNull())
        .addColumn('allowed_headers', 'text', (c) => c.notNull())
        .addColumn('expose_headers', 'text', (c) => c.notNull())
        .addColumn('allow_credentials', 'integer', (c) => c.notNull())
        .addColumn('max_age_seconds', 'integer', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
    },
  },
  '0012_traffic_notices': {
    async up(db) {
      await db.schema
        .createTable('traffic_notices')
        .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('operation', 'text', (c) => c.notNull())
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('sent_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('traffic_notices_pk', ['project_id', 'operation', 'day'])
        .execute();
      await db.schema.createIndex('traffic_notices_day').on('traffic_notices').column('day').execute();
    },
  },
  '0011_traffic': {
    async up(db, dialect) {
      const id = idColumnType(dialect);
      const pk = (c: { primaryKey(): { autoIncrement(): unknown } }) =>
        (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()) as never;
      for (const [table, time] of [
        ['traffic_minutes', 'minute'],
        ['traffic_hours', 'hour'],
      ] as const) {
        await db.schema
          .createTable(table)
          .addColumn('node_id', 'text', (c) => c.notNull())
          .addColumn('project_id', 'bigint', (c) => c.notNull())
          .addColumn('operation', 'text', (c) => c.notNull())
          .addColumn('status', 'integer', (c) => c.notNull())
          .addColumn(time, 'text', (c) => c.notNull())
          .addColumn('requests', 'bigint', (c) => c.notNull())
          .addColumn('errors', 'bigint', (c) => c.notNull())
          .addColumn('bytes_in', 'bigint', (c) => c.notNull())
          .addColumn('bytes_out', 'bigint', (c) => c.notNull())
          .addColumn('latency', 'text', (c) => c.notNull())
          .addPrimaryKeyConstraint(`${table}_pk`, ['node_id', 'project_id', 'operation', 'status', time])
          .execute();
        // Readers ask by project and time range; rollup and retention by time.
        await db.schema
          .createIndex(`${table}_project_${time}`)
          .on(table)
          .columns(['project_id', time])
          .execute();
        await db.schema.createIndex(`${table}_${time}`).on(table).column(time).execute();
      }
      await db.schema
        .createTable('traffic_callers')
        .addColumn('node_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'bigint', (c) => c.notNull())
        .addColumn('caller', 'text', (c) => c.notNull())
        .addColumn('caller_label', 'text', (c) => c.notNull())
        .addColumn('caller_kind', 'text', (c) => c.notNull())
        .addColumn('operation', 'text', (c) => c.notNull())
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('requests', 'bigint', (c) => c.notNull())
        .addColumn('errors', 'bigint', (c) => c.notNull())
        .addColumn('last_seen_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('traffic_callers_pk', [
          'node_id',
          'project_id',
          'caller',
          'operation',
          'day',
        ])
        .execute();
      await db.schema
        .createIndex('traffic_callers_project_day')
        .on('traffic_callers')
        .columns(['project_id', 'day'])
        .execute();
      await db.schema.createIndex('traffic_callers_day').on('traffic_callers').column('day').execute();
      await db.schema
        .createTable('request_logs')
        .addColumn('id', id, pk)
        .addColumn('node_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'bigint', (c) => c.notNull())
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('method', 'text', (c) => c.notNull())
        .addColumn('operation', 'text', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('latency_ms', 'double precision', (c) => c.notNull())
        .addColumn('bytes_in', 'bigint', (c) => c.notNull())
        .addColumn('bytes_out', 'bigint', (c) => c.notNull())
        .addColumn('caller_label', 'text', (c) => c.notNull())
        .addColumn('request_id', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('request_logs_project')
        .on('request_logs')
        .columns(['project_id', 'id'])
        .execute();
      await db.schema
        .createIndex('request_logs_node_project')
        .on('request_logs')
        .columns(['node_id', 'project_id', 'id'])
        .execute();
    },
  },
  '0009_deploy_changes': {
    async up(db, dialect) {
      const id = idColumnType(dialect);
      const pk = (c: { primaryKey(): { autoIncrement(): unknown } }) =>
        (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()) as never;
      await db.schema
        .alterTable('deploys')
        .addColumn('number', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .alterTable('deploys')
        .addColumn('preview', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('deploys').addColumn('changes', 'text').execute();
      await db.schema
        .alterTable('deploys')
        .addColumn('breaking', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      // Existing deploys are numbered per project in the order they were made (pruned ones are
      // gone, so a project's survivors count from 1).
      await sql`UPDATE deploys SET number = (SELECT COUNT(*) FROM deploys d WHERE d.project_id = deploys.project_id AND d.id <= deploys.id)`.execute(
        db,
      );
      await db.schema
        .createIndex('deploys_project_number')
        .on('deploys')
        .columns(['project_id', 'number'])
        .unique()
        .execute();
      await db.schema
        .createTable('publications')
        .addColumn('id', id, pk)
        .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        // No foreign key: a publication outlives its deploy's pruning (docs/decisions/deploy-changes.md).
        .addColumn('deploy_id', 'bigint', (c) => c.notNull())
        .addColumn('deploy_number', 'integer', (c) => c.notNull())
        .addColumn('published_at', 'text', (c) => c.notNull())
        .addColumn('published_by', 'bigint', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('changes', 'text', (c) => c.notNull())
        .addColumn('breaking', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createIndex('publications_project')
        .on('publications')
        .columns(['project_id', 'id'])
        .execute();
      // The changelog starts at what is live now: one publication per live deploy, without changes.
      await sql`INSERT INTO publications (project_id, deploy_id, deploy_number, published_at, published_by, changes, breaking)
        SELECT p.id, d.id, d.number, d.created_at, d.created_by, '[]', 0
        FROM projects p JOIN deploys d ON d.id = p.active_deploy_id
        ORDER BY p.id`.execute(db);
    },
  },
  '0010_preview_links': {
    async up(db, dialect) {
      const id = idColumnType(dialect);
      const pk = (c: { primaryKey(): { autoIncrement(): unknown } }) =>
        (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()) as never;
      await db.schema
        .createTable('preview_links')
        .addColumn('id', id, pk)
        .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('deploy_id', 'bigint', (c) => c.notNull().references('deploys.id').onDelete('cascade'))
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_by', 'bigint', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema
        .createIndex('preview_links_deploy')
        .on('preview_links')
        .columns(['deploy_id', 'id'])
        .execute();
      await db.schema
        .createTable('preview_sessions')
        .addColumn('id', id, pk)
        .addColumn('deploy_id', 'bigint', (c) => c.notNull().references('deploys.id').onDelete('cascade'))
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('link_id', 'bigint', (c) => c.references('preview_links.id').onDelete('cascade'))
        .addColumn('user_id', 'bigint', (c) => c.references('users.id').onDelete('cascade'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('exchanged_at', 'text')
        .execute();
      await db.schema
        .createIndex('preview_sessions_expiry')
        .on('preview_sessions')
        .column('expires_at')
        .execute();
    },
  },
  '0008_origin_grants': {
    async up(db, dialect) {
      const id = idColumnType(dialect);
      const pk = (c: { primaryKey(): { autoIncrement(): unknown } }) =>
        (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()) as never;
      await db.schema
        .createTable('origin_grants')
        .addColumn('id', id, pk)
        .addColumn('team_id', 'bigint', (c) => c.notNull().references('teams.id').onDelete('cascade'))
        .addColumn('origin', 'text', (c) => c.notNull())
        .addColumn('granted_by', 'bigint', (c) => c.references('users.id').onDelete('set null'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('origin_grants_team_origin', ['team_id', 'origin'])
        .execute();
      // KENNEL_ORIGIN_ALLOWLIST served every team before; from now on it serves the bootstrap team
      // only: on an existing installation, the first team a platform admin owns (the first start
      // made it, "Kennel", with the Petstore). Other teams need a platform admin's grant.
      await sql`INSERT INTO origin_grants (team_id, origin, granted_by, created_at)
        SELECT MIN(m.team_id), 'KENNEL_ORIGIN_ALLOWLIST', NULL, ${new Date().toISOString()}
        FROM memberships m JOIN users u ON u.id = m.user_id
        WHERE m.role = 'owner' AND u.is_admin = true
        HAVING MIN(m.team_id) IS NOT NULL`.execute(db);
    },
  },
  '0006_account_proof': {
    async up(db) {
      await db.schema.alterTable('users').addColumn('email_proved_at', 'text').execute();
      // Accounts made before: only platform admins were the operator's word; the rest never proved
      // their email (it costs them only the unproved-account rules of docs/decisions/accounts-and-sign-in.md).
      await sql`UPDATE users SET email_proved_at = created_at WHERE is_admin = true`.execute(db);
      await db.schema.alterTable('invitations').addColumn('mailed_at', 'text').execute();
      await db.schema
        .alterTable('invitations')
        .addColumn('role', 'text', (c) => c.notNull().defaultTo('member'))
        .execute();
    },
  },
  '0005_people': {
    async up(db, dialect) {
      const id = idColumnType(dialect);
      const pk = (c: { primaryKey(): { autoIncrement(): unknown } }) =>
        (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()) as never;
      await db.schema.alterTable('users').addColumn('name', 'text').execute();
      await db.schema
        .createTable('invitations')
        .addColumn('id', id, pk)
        .addColumn('team_id', 'bigint', (c) => c.notNull().references('teams.id').onDelete('cascade'))
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('invited_by', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('accepted_at', 'text')
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema.createIndex('invitations_team').on('invitations').columns(['team_id', 'id']).execute();
      await db.schema
        .createTable('password_resets')
        .addColumn('id', id, pk)
        .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_by', 'bigint')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('used_at', 'text')
        .execute();
    },
  },
  '0004_domain_owned_certificates': {
    async up(db) {
      // A certificate belongs to the domain that ordered it, so another project's claim on the same
      // hostname cannot drop it; existing rows go to the project serving the hostname now.
      await db.schema.alterTable('certificates').addColumn('domain_id', 'bigint').execute();
      await sql`UPDATE certificates SET domain_id = (SELECT d.id FROM domains d WHERE d.hostname = certificates.hostname AND d.state IN ('verified', 'misconfigured'))`.execute(
        db,
      );
      await db.schema.createIndex('certificates_domain').on('certificates').column('domain_id').execute();
      // Jobs that say `issued` for a certificate another project's removal dropped (the bug this
      // fixes) are due again at once.
      await sql`UPDATE certificate_jobs SET state = 'pending', attempts = 0, next_attempt_at = '1970-01-01T00:00:00.000Z' WHERE state = 'issued' AND NOT EXISTS (SELECT 1 FROM certificates c WHERE c.domain_id = certificate_jobs.domain_id)`.execute(
        db,
      );
      // The process holding a lease, so a restarted node recognises (and reclaims) its own.
      await db.schema.alterTable('certificate_jobs').addColumn('lease_instance', 'text').execute();
    },
  },
  '0003_webhooks': {
    async up(db, dialect) {
      await db.schema
        .createTable('webhook_endpoints')
        .addColumn('team_id', 'bigint', (c) => c.primaryKey().references('teams.id').onDelete('cascade'))
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('secret_sealed', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await createOutboxTables(db, dialect, PLATFORM_OUTBOX);
    },
  },
  '0002_certificates': {
    async up(db) {
      await db.schema
        .createTable('certificates')
        .addColumn('hostname', 'text', (c) => c.primaryKey())
        .addColumn('issuer', 'text', (c) => c.notNull())
        .addColumn('certificate_pem', 'text', (c) => c.notNull())
        .addColumn('key_sealed', 'text', (c) => c.notNull())
        .addColumn('not_before', 'text', (c) => c.notNull())
        .addColumn('not_after', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('certificate_jobs')
        .addColumn('domain_id', 'bigint', (c) => c.primaryKey().references('domains.id').onDelete('cascade'))
        .addColumn('hostname', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('reason', 'text')
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', 'text')
        .addColumn('lease_owner', 'text')
        .addColumn('lease_until', 'text')
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('certificate_jobs_due')
        .on('certificate_jobs')
        .column('next_attempt_at')
        .execute();
      await db.schema
        .createTable('acme_challenges')
        .addColumn('token', 'text', (c) => c.primaryKey())
        .addColumn('key_authorization', 'text', (c) => c.notNull())
        .addColumn('hostname', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('platform_keys')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
    },
  },
  '0001_accounts_projects_domains': {
    async up(db, dialect) {
      const id = idColumnType(dialect);
      const pk = (c: { primaryKey(): { autoIncrement(): unknown } }) =>
        (dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey()) as never;
      await db.schema
        .createTable('users')
        .addColumn('id', id, pk)
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('is_admin', booleanColumnType(dialect), (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('teams')
        .addColumn('id', id, pk)
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('plan', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('memberships')
        .addColumn('team_id', 'bigint', (c) => c.notNull().references('teams.id').onDelete('cascade'))
        .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('memberships_pk', ['team_id', 'user_id'])
        .execute();
      await db.schema
        .createTable('sessions')
        .addColumn('id_hash', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('csrf_token', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('api_tokens')
        .addColumn('id', id, pk)
        .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('prefix', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('last_used_at', 'text')
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema
        .createTable('projects')
        .addColumn('id', id, pk)
        .addColumn('team_id', 'bigint', (c) => c.notNull().references('teams.id').onDelete('restrict'))
        .addColumn('slug', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('origin_url', 'text', (c) => c.notNull())
        .addColumn('active_deploy_id', 'bigint')
        .addColumn('primary_domain', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('deploys')
        .addColumn('id', id, pk)
        .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('origin_url', 'text', (c) => c.notNull())
        .addColumn('document', 'text')
        .addColumn('source_format', 'text', (c) => c.notNull())
        .addColumn('problems', 'text')
        .addColumn('created_by', 'bigint')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('deploys_project').on('deploys').columns(['project_id', 'id']).execute();
      await db.schema
        .createTable('domains')
        .addColumn('id', id, pk)
        .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('hostname', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('is_apex', booleanColumnType(dialect), (c) => c.notNull())
        .addColumn('ownership_token', 'text', (c) => c.notNull())
        .addColumn('reason', 'text')
        .addColumn('reason_detail', 'text')
        .addColumn('verified_at', 'text')
        .addColumn('last_checked_at', 'text')
        .addColumn('next_check_at', 'text')
        .addColumn('check_attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('checks_until', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('removed_at', 'text')
        .execute();
      // One live claim per hostname per project; one serving project per hostname.
      await sql`CREATE UNIQUE INDEX domains_project_hostname ON domains (project_id, hostname) WHERE state <> 'removed'`.execute(
        db,
      );
      await sql`CREATE UNIQUE INDEX domains_served_hostname ON domains (hostname) WHERE state IN ('verified', 'misconfigured')`.execute(
        db,
      );
      await db.schema.createIndex('domains_next_check').on('domains').column('next_check_at').execute();
      await db.schema
        .createTable('domain_events')
        .addColumn('id', id, pk)
        .addColumn('domain_id', 'bigint', (c) => c.notNull().references('domains.id').onDelete('cascade'))
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('detail', 'text')
        .addColumn('at', 'text', (c) => c.notNull().defaultTo(now))
        .execute();
      await db.schema
        .createIndex('domain_events_domain')
        .on('domain_events')
        .columns(['domain_id', 'id'])
        .execute();
      await db.schema
        .createTable('redirects')
        .addColumn('project_id', 'bigint', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('from_host', 'text', (c) => c.notNull())
        .addColumn('to_host', 'text', (c) => c.notNull())
        .addColumn('status', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('redirects_pk', ['project_id', 'from_host'])
        .execute();
    },
  },
};
