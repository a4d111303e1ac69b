import { type JsonSchema, ref } from '../../lib/http-api/index.ts';
import { PLAN_NAMES } from '../plans.ts';

const text = (description: string, extra: JsonSchema = {}): JsonSchema => ({
  type: 'string',
  description,
  ...extra,
});
const nullableText = (description: string): JsonSchema => ({ type: 'string', nullable: true, description });
const id = (description: string): JsonSchema => ({ type: 'integer', minimum: 1, description });
const latency = (description: string): JsonSchema => ({
  type: 'number',
  nullable: true,
  minimum: 0,
  description: `${description}, in ms, within 1% (LatencySketch.RELATIVE_ACCURACY); null without requests`,
});

/** The management API's resources, as named schemas of its OpenAPI document. */
export const platformSchemas: Record<string, JsonSchema> = {
  Error: {
    type: 'object',
    required: ['code', 'message', 'status'],
    properties: {
      code: text('Machine-readable error code (docs/platform-api.md)', { pattern: '^[a-z][a-z0-9_]*$' }),
      message: text('What went wrong and what to do'),
      status: { type: 'integer', minimum: 400, maximum: 599, description: 'The HTTP status' },
      changes: {
        type: 'array',
        items: ref('Change'),
        description:
          'With breaking_changes: the changes against the live deploy, the breaking ones among them',
      },
      problems: {
        type: 'array',
        description: 'With invalid_cors_policy: each problem under the field it is about',
        items: {
          type: 'object',
          required: ['field', 'message'],
          properties: { field: text('The field'), message: text('What is wrong and how to fix it') },
        },
      },
    },
  },
  Credentials: {
    type: 'object',
    required: ['email', 'password'],
    additionalProperties: false,
    properties: {
      email: text('Account email', { minLength: 3, maxLength: 254 }),
      password: text('Account password', { minLength: 1, maxLength: 1024 }),
    },
  },
  Session: {
    type: 'object',
    required: ['email', 'isAdmin', 'csrfToken', 'expiresAt'],
    properties: {
      email: text('Signed-in account'),
      isAdmin: { type: 'boolean' },
      csrfToken: text('Send it back as X-CSRF-Token on every change made with the session cookie'),
      expiresAt: text('When the session ends', { format: 'date-time' }),
    },
  },
  Me: {
    type: 'object',
    required: ['email', 'isAdmin'],
    properties: {
      email: text('Account email'),
      isAdmin: { type: 'boolean' },
      csrfToken: text(
        "The session's CSRF token, when signed in with the dashboard cookie (so a reloaded page can make changes)",
      ),
    },
  },
  SessionState: {
    type: 'object',
    required: ['signedIn'],
    properties: {
      signedIn: {
        type: 'boolean',
        description: 'Whether the request carried a live dashboard session cookie',
      },
      email: text('Signed-in account (signed in only)'),
      isAdmin: { type: 'boolean', description: 'Platform admin (signed in only)' },
      csrfToken: text("The session's CSRF token, for X-CSRF-Token on changes (signed in only)"),
    },
  },
  NewToken: {
    type: 'object',
    required: ['name'],
    additionalProperties: false,
    properties: {
      name: text('What the token is for, e.g. "laptop CLI"', { minLength: 1, maxLength: 100 }),
      expiresInDays: {
        type: 'integer',
        minimum: 1,
        maximum: 366,
        nullable: true,
        description:
          'Days until the token stops working (401 token_expired after); left out or null: it never expires',
      },
      scope: {
        type: 'string',
        enum: ['full', 'read'],
        default: 'full',
        description:
          'full: everything your account may do; read: GET and HEAD only (any change answers 403 token_read_only)',
      },
    },
  },
  Token: {
    type: 'object',
    required: ['id', 'name', 'prefix', 'createdAt', 'expiresAt', 'scope'],
    properties: {
      id: id('Token id'),
      name: text('Token name'),
      prefix: text('The first characters of the token, to recognise it'),
      createdAt: text('Creation time', { format: 'date-time' }),
      lastUsedAt: nullableText('Last use'),
      expiresAt: { ...nullableText('When it stops working (null: never)'), format: 'date-time' },
      scope: { type: 'string', enum: ['full', 'read'], description: 'full, or read (GET and HEAD only)' },
    },
  },
  CreatedToken: {
    allOf: [
      ref('Token'),
      {
        type: 'object',
        required: ['token'],
        properties: { token: text('The secret: shown this once, stored only as a hash') },
      },
    ],
  },
  WebhookEndpointChange: {
    type: 'object',
    required: ['url'],
    additionalProperties: false,
    properties: {
      url: text('Where events are POSTed: https:// (http:// only to loopback), see docs/webhooks.md', {
        minLength: 1,
        maxLength: 2000,
      }),
    },
  },
  WebhookEndpoint: {
    type: 'object',
    required: ['teamId', 'url', 'secretHint', 'createdAt', 'updatedAt'],
    properties: {
      teamId: id('Team id'),
      url: text('Where events are POSTed'),
      secretHint: text('The last characters of the signing secret, to recognise it'),
      createdAt: text('Creation time', { format: 'date-time' }),
      updatedAt: text('Last change', { format: 'date-time' }),
    },
  },
  WebhookEndpointSet: {
    type: 'object',
    required: ['endpoint', 'secret'],
    properties: {
      endpoint: ref('WebhookEndpoint'),
      secret: {
        type: 'string',
        nullable: true,
        description:
          'The signing secret (whsec_…), only when the endpoint is created or its secret rotated: shown this once',
      },
    },
  },
  WebhookDelivery: {
    type: 'object',
    required: ['id', 'type', 'state', 'attempts', 'createdAt', 'payload', 'log'],
    properties: {
      id: text('Message id: the webhook-id header, the same on every attempt'),
      type: text('Event type, e.g. domain.verified'),
      state: text('pending (being attempted or waiting for a retry), delivered, failed (retries exhausted)', {
        enum: ['pending', 'delivered', 'failed'],
      }),
      attempts: { type: 'integer', minimum: 0, description: 'Attempts in the current schedule' },
      nextAttemptAt: nullableText('When the next attempt is due'),
      lastStatus: { type: 'integer', nullable: true, description: 'HTTP status of the last attempt' },
      lastError: nullableText('Why the last attempt failed'),
      createdAt: text('When the event happened', { format: 'date-time' }),
      deliveredAt: nullableText('When it was delivered'),
      payload: { type: 'object', additionalProperties: true, description: 'The body as sent' },
      log: {
        type: 'array',
        items: {
          type: 'object',
          required: ['attempt', 'at', 'statusCode', 'durationMs', 'error', 'ok'],
          properties: {
            attempt: { type: 'integer', minimum: 1 },
            at: text('When', { format: 'date-time' }),
            statusCode: { type: 'integer', nullable: true },
            durationMs: { type: 'integer', minimum: 0 },
            error: nullableText('Why it failed'),
            ok: { type: 'boolean' },
          },
        },
      },
    },
  },
  Team: {
    type: 'object',
    required: ['id', 'name', 'plan'],
    properties: {
      id: id('Team id'),
      name: text('Team name'),
      plan: { type: 'string', enum: PLAN_NAMES },
      role: {
        type: 'string',
        enum: ['owner', 'member', null],
        nullable: true,
        description: 'Your role (null for admins outside the team)',
      },
    },
  },
  NewTeam: {
    type: 'object',
    required: ['name'],
    additionalProperties: false,
    properties: { name: text('Team name', { minLength: 1, maxLength: 100 }) },
  },
  TeamChange: {
    type: 'object',
    required: ['name'],
    additionalProperties: false,
    properties: { name: text('The new team name', { minLength: 1, maxLength: 100 }) },
  },
  PlanChange: {
    type: 'object',
    required: ['plan'],
    additionalProperties: false,
    properties: { plan: { type: 'string', enum: PLAN_NAMES } },
  },
  NewMember: {
    type: 'object',
    required: ['email'],
    additionalProperties: false,
    properties: {
      email: text('Email of the person to invite (with or without an account)', {
        minLength: 3,
        maxLength: 254,
      }),
      role: { type: 'string', enum: ['owner', 'member'], default: 'member' },
    },
  },
  TeamMember: {
    type: 'object',
    required: ['userId', 'email', 'name', 'role', 'since'],
    properties: {
      userId: id('User id'),
      email: text('Account email'),
      name: nullableText('The name given when joining (null for accounts made before names)'),
      role: { type: 'string', enum: ['owner', 'member'] },
      since: text('When they joined the team', { format: 'date-time' }),
    },
  },
  RoleChange: {
    type: 'object',
    required: ['role'],
    additionalProperties: false,
    properties: { role: { type: 'string', enum: ['owner', 'member'] } },
  },
  NewInvitation: {
    type: 'object',
    required: ['email'],
    additionalProperties: false,
    properties: { email: text('Email of the person to invite', { minLength: 3, maxLength: 254 }) },
  },
  Invitation: {
    type: 'object',
    required: ['id', 'teamId', 'email', 'role', 'createdAt', 'expiresAt', 'status'],
    properties: {
      id: id('Invitation id'),
      teamId: id('The team'),
      email: text('Who is invited'),
      role: { type: 'string', enum: ['owner', 'member'], description: 'The role on joining' },
      createdAt: text('When it was made', { format: 'date-time' }),
      expiresAt: text('When the token stops working', { format: 'date-time' }),
      status: { type: 'string', enum: ['pending', 'accepted', 'revoked', 'expired'] },
    },
  },
  CreatedInvitation: {
    allOf: [
      ref('Invitation'),
      {
        type: 'object',
        required: ['mailed'],
        properties: {
          token: text(
            'The one-time invitation token (kin_…), shown only here and only when it was not mailed (pass it on over a channel you trust)',
          ),
          url: text(
            'When not mailed: the dashboard link that accepts it, on the platform address the request came to: <address>/invitations/accept#token=kin_… (the token in the fragment, which browsers never send to a server)',
            { format: 'uri' },
          ),
          mailed: {
            type: 'boolean',
            description:
              'Whether it was mailed (SMTP_URL set and the server took it): then the token is only in the mail, and accepting it proves the email. Otherwise the answer holds `token` and `url`',
          },
        },
      },
    ],
  },
  InvitationToken: {
    type: 'object',
    required: ['token'],
    additionalProperties: false,
    properties: { token: text('The invitation token', { minLength: 1, maxLength: 200 }) },
  },
  InvitationDetails: {
    type: 'object',
    required: ['teamId', 'teamName', 'email', 'role', 'expiresAt', 'invitedBy'],
    properties: {
      teamId: id('The team to join'),
      teamName: text('Its name'),
      email: text('The invited email'),
      role: { type: 'string', enum: ['owner', 'member'], description: 'The role to join with' },
      expiresAt: text('Until when the link works', { format: 'date-time' }),
      invitedBy: {
        type: 'object',
        nullable: true,
        required: ['name', 'email'],
        description: 'The owner who invited (null when that account is gone)',
        properties: { name: nullableText('Their name'), email: text('Their email') },
      },
    },
  },
  InvitationAcceptance: {
    type: 'object',
    required: ['token', 'password'],
    additionalProperties: false,
    properties: {
      token: text('The invitation token', { minLength: 1, maxLength: 200 }),
      name: text('Your name (for a new account)', { minLength: 1, maxLength: 100 }),
      password: text(
        'A new password (at least 12 characters), or your current one if the email has an account',
        {
          minLength: 12,
          maxLength: 1024,
        },
      ),
    },
  },
  AcceptedInvitation: {
    type: 'object',
    required: ['email', 'teamId', 'role'],
    properties: {
      email: text('Your account'),
      teamId: id('The team joined'),
      role: { type: 'string', enum: ['owner', 'member'] },
    },
  },
  SignUp: {
    type: 'object',
    required: ['email', 'name', 'password'],
    additionalProperties: false,
    properties: {
      email: text('Account email', { minLength: 3, maxLength: 254 }),
      name: text('Your name', { minLength: 1, maxLength: 100 }),
      password: text('Password, at least 12 characters', { minLength: 12, maxLength: 1024 }),
    },
  },
  SignedUp: {
    type: 'object',
    required: ['email', 'name', 'teamId'],
    properties: {
      email: text('Account email'),
      name: text('Your name'),
      teamId: id('The team made for you, which you own'),
    },
  },
  PasswordResetPolicy: {
    type: 'object',
    required: ['byMail'],
    properties: {
      byMail: {
        type: 'boolean',
        description:
          'Whether POST /api/v1/password-reset/request mails reset links (SMTP_URL is set); otherwise ask a team owner or the operator',
      },
    },
  },
  PasswordResetRequest: {
    type: 'object',
    required: ['email'],
    additionalProperties: false,
    properties: { email: text('Your account email', { minLength: 3, maxLength: 254 }) },
  },
  PasswordResetRequested: {
    type: 'object',
    required: ['message'],
    properties: { message: text('The same for every email: what happens next') },
  },
  SignUpPolicy: {
    type: 'object',
    required: ['open'],
    properties: {
      open: {
        type: 'boolean',
        description: 'Whether POST /api/v1/users takes sign-ups (KENNEL_OPEN_SIGNUP=on)',
      },
    },
  },
  PasswordChange: {
    type: 'object',
    required: ['currentPassword', 'newPassword'],
    additionalProperties: false,
    properties: {
      currentPassword: text('Your current password', { minLength: 1, maxLength: 1024 }),
      newPassword: text('The new password, at least 12 characters', { minLength: 12, maxLength: 1024 }),
    },
  },
  PasswordResetLink: {
    type: 'object',
    required: ['userId', 'email', 'token', 'url', 'expiresAt'],
    properties: {
      userId: id('The member'),
      email: text('Their email'),
      token: text('The one-time reset token (krs_…), shown only here'),
      url: text(
        'The dashboard link that uses it: <address>/reset-password#token=krs_… (the token in the fragment)',
        { format: 'uri' },
      ),
      expiresAt: text('When the token stops working', { format: 'date-time' }),
    },
  },
  PasswordResetRedemption: {
    type: 'object',
    required: ['token', 'password'],
    additionalProperties: false,
    properties: {
      token: text('The reset token', { minLength: 1, maxLength: 200 }),
      password: text('The new password, at least 12 characters', { minLength: 12, maxLength: 1024 }),
    },
  },
  PasswordResetDone: {
    type: 'object',
    required: ['email', 'sessionsEnded', 'tokensRevoked'],
    properties: {
      email: text('The account whose password was set'),
      sessionsEnded: { type: 'integer', minimum: 0, description: 'Sessions of the account signed out' },
      tokensRevoked: { type: 'integer', minimum: 0, description: 'API tokens of the account revoked' },
    },
  },
  NewProject: {
    type: 'object',
    required: ['teamId', 'slug', 'name', 'originUrl'],
    additionalProperties: false,
    properties: {
      teamId: id('The team that owns the project'),
      slug: text('DNS label of the default address <slug>.<platform domain>', {
        minLength: 1,
        maxLength: 63,
      }),
      name: text('Display name', { minLength: 1, maxLength: 100 }),
      originUrl: text(
        "Where the API runs: an http or https URL at a public address, without user name or password; a private origin only with a platform admin's grant to the team (OriginGrant)",
        { minLength: 1, maxLength: 2048 },
      ),
    },
  },
  NewOriginGrant: {
    type: 'object',
    required: ['teamId', 'origin'],
    additionalProperties: false,
    properties: {
      teamId: id('The team whose projects may reach the origin'),
      origin: text(
        'An origin, scheme://host:port (no path), e.g. http://10.0.0.5:8080; or KENNEL_ORIGIN_ALLOWLIST for every origin of that setting',
        { minLength: 1, maxLength: 2048 },
      ),
    },
  },
  OriginGrant: {
    type: 'object',
    required: ['id', 'teamId', 'teamName', 'origin', 'grantedBy', 'createdAt'],
    properties: {
      id: id('Grant id'),
      teamId: id('The team'),
      teamName: text('The team name'),
      origin: text('The origin as compared (URL.origin), or KENNEL_ORIGIN_ALLOWLIST'),
      grantedBy: nullableText("The granting admin's email; null for the first start's grant"),
      createdAt: text('When it was granted', { format: 'date-time' }),
    },
  },
  ProjectChange: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    description: 'What to change; the slug never changes (it is the published host)',
    properties: {
      name: text('New display name', { minLength: 1, maxLength: 100 }),
      originUrl: text(
        'New origin: checked as at creation (http or https, no user name or password, a public address unless the team has a grant)',
        { minLength: 1, maxLength: 2048 },
      ),
    },
  },
  ProjectDeletion: {
    type: 'object',
    required: ['slug', 'domains', 'certificates', 'deploys'],
    properties: {
      slug: text('Project slug'),
      domains: { type: 'integer', minimum: 0, description: 'Custom domains (not already removed)' },
      certificates: { type: 'integer', minimum: 0, description: "Certificates of the project's domains" },
      deploys: { type: 'integer', minimum: 0, description: 'Deploys, previews included' },
    },
  },
  Project: {
    type: 'object',
    required: ['slug', 'name', 'teamId', 'originUrl', 'plan', 'defaultHost'],
    properties: {
      slug: text('Project slug'),
      name: text('Display name'),
      teamId: id('Owning team'),
      originUrl: text('Origin of the API'),
      plan: { type: 'string', enum: PLAN_NAMES },
      defaultHost: text('The default address, <slug>.<platform domain>'),
      activeDeployId: { type: 'integer', nullable: true },
      primaryDomain: nullableText('The primary custom domain'),
    },
  },
  NewDeploy: {
    type: 'object',
    required: ['document'],
    additionalProperties: false,
    properties: {
      document: text(
        'The OpenAPI 3.0.x or 3.1.x document, JSON or YAML text; its size is bounded by the deploy body limit (DEPLOY_BODY_LIMIT, 32 MiB by default) and, parsed, by the DEPLOY_MAX_* settings',
        { minLength: 1 },
      ),
      originUrl: text(
        'A new origin for the project (optional; a public address, unless the operator allowlists it)',
        { minLength: 1, maxLength: 2048 },
      ),
      allowBreaking: {
        type: 'boolean',
        default: false,
        description:
          'Publish even when the changes against the live deploy break callers (otherwise 409 breaking_changes)',
      },
      dryRun: {
        type: 'boolean',
        default: false,
        description:
          'Only check: answer 200 with the problems and the changes against the live deploy, deploy and store nothing',
      },
      preview: {
        type: 'boolean',
        default: false,
        description:
          'Store it as a preview, which never changes the live site (no gate, no publication); promote it later with promoteDeploy',
      },
    },
  },
  Deploy: {
    type: 'object',
    required: [
      'id',
      'status',
      'originUrl',
      'sourceFormat',
      'problems',
      'problemDetails',
      'active',
      'createdAt',
      'number',
      'preview',
      'createdBy',
      'changes',
      'breaking',
    ],
    properties: {
      id: id('Deploy id'),
      number: id("The deploy's number in its project, counting from 1 (#1 is the first deploy)"),
      preview: { type: 'boolean', description: 'Made as a preview (it went live only if promoted since)' },
      createdBy: nullableText("Who made it (the account's email); null for the system"),
      changes: {
        type: 'array',
        items: ref('Change'),
        description:
          'The changes against the deploy live when it was made (empty for the first deploy and for failed ones)',
      },
      breaking: { type: 'boolean', description: 'Whether any of the changes is breaking' },
      status: { type: 'string', enum: ['succeeded', 'failed'] },
      originUrl: text('Origin at this deploy'),
      sourceFormat: { type: 'string', enum: ['json', 'yaml'] },
      problems: {
        type: 'array',
        items: { type: 'string' },
        description:
          "A failed deploy's problems, one line each: where (JSON pointer, line and column) and what to do (problemDetails as text)",
      },
      problemDetails: {
        type: 'array',
        description: "A failed deploy's problems, all of them at once (at most 100), each with its place",
        items: {
          type: 'object',
          required: ['pointer', 'line', 'column', 'message'],
          properties: {
            pointer: text("JSON pointer (RFC 6901) into the document; '' for the whole document"),
            line: { type: 'integer', nullable: true, description: '1-based line in the uploaded text' },
            column: { type: 'integer', nullable: true, description: '1-based column in the uploaded text' },
            message: text('What is wrong, and what to do'),
          },
        },
      },
      active: { type: 'boolean' },
      createdAt: text('When it was deployed', { format: 'date-time' }),
    },
  },
  NewPreviewLink: {
    type: 'object',
    additionalProperties: false,
    properties: {
      expiresIn: {
        type: 'integer',
        minimum: 300,
        maximum: 2592000,
        default: 604800,
        description:
          'Seconds until the link stops opening the preview: 300 (five minutes) to 2592000 (thirty days); a week when left out',
      },
    },
  },
  PreviewLink: {
    type: 'object',
    required: ['id', 'deployId', 'host', 'createdBy', 'createdAt', 'expiresAt', 'revokedAt', 'active'],
    properties: {
      id: id('Share link id'),
      deployId: id('The preview deploy it opens'),
      host: text("The preview's address, <slug>--<deployId>.<platform domain>"),
      createdBy: nullableText('Who made it (email)'),
      createdAt: text('When it was made', { format: 'date-time' }),
      expiresAt: text('When it stops opening the preview', { format: 'date-time' }),
      revokedAt: nullableText('When a team member revoked it'),
      active: {
        type: 'boolean',
        description: 'Whether it opens the preview now (neither revoked nor expired)',
      },
    },
  },
  CreatedPreviewLink: {
    allOf: [
      ref('PreviewLink'),
      {
        type: 'object',
        required: ['token', 'url'],
        properties: {
          token: text('The secret (kpl_…), shown only here; stored as a hash'),
          url: text(
            'The link to pass on: <preview address>/?kennel_preview=kpl_…; whoever opens it gets a cookie for the preview host and the clean URL',
            { format: 'uri' },
          ),
        },
      },
    ],
  },
  PreviewAccess: {
    type: 'object',
    required: ['url', 'expiresAt'],
    properties: {
      url: text(
        "The preview's address with a one-time hand-off token (kph_…), also in Location: open it in the browser within a minute",
        { format: 'uri' },
      ),
      expiresAt: text('When the hand-off token stops working', { format: 'date-time' }),
    },
  },
  Change: {
    type: 'object',
    required: ['id', 'level', 'location', 'message'],
    properties: {
      id: text("The rule, stable and kebab-case, e.g. 'operation-removed' (docs/changes.md lists them)"),
      level: {
        type: 'string',
        enum: ['breaking', 'warning', 'info'],
        description: 'breaking: some caller fails; warning: a caller may; info: nothing breaks',
      },
      operation: text("The operation it belongs to, e.g. 'GET /pets/{petId}'"),
      location: text('JSON pointer into the new document (into the old one for removals)'),
      message: text('What changed, in a sentence'),
      traffic: {
        type: 'object',
        required: ['requests', 'callers'],
        description:
          "On a breaking change of an operation, in a deploy's or a promotion's answer (and the 409): how many calls it had, and from how many distinct callers, in the last 7 days (docs/traffic.md)",
        properties: {
          requests: { type: 'integer', minimum: 0 },
          callers: { type: 'integer', minimum: 0 },
        },
      },
    },
  },
  DeployCheck: {
    type: 'object',
    required: ['valid', 'problems', 'changes', 'breaking'],
    properties: {
      valid: { type: 'boolean', description: 'Whether the document would deploy' },
      problems: {
        type: 'array',
        items: { type: 'string' },
        description: "Why it would fail, one line each, as a failed deploy's problems",
      },
      problemDetails: {
        type: 'array',
        description: "The problems with their places, as a failed deploy's problemDetails",
        items: {
          type: 'object',
          required: ['pointer', 'line', 'column', 'message'],
          properties: {
            pointer: text("JSON pointer (RFC 6901) into the document; '' for the whole document"),
            line: { type: 'integer', nullable: true, description: '1-based line in the uploaded text' },
            column: { type: 'integer', nullable: true, description: '1-based column in the uploaded text' },
            message: text('What is wrong, and what to do'),
          },
        },
      },
      changes: {
        type: 'array',
        items: ref('Change'),
        description: 'The changes against the live deploy (empty when invalid or nothing is live)',
      },
      breaking: {
        type: 'boolean',
        description: 'Whether deploying it would be refused with 409 breaking_changes without allowBreaking',
      },
    },
  },
  PromoteDeploy: {
    type: 'object',
    additionalProperties: false,
    properties: {
      allowBreaking: {
        type: 'boolean',
        default: false,
        description:
          'Publish even when its changes against the live deploy break callers (otherwise 409 breaking_changes)',
      },
    },
  },
  Publication: {
    type: 'object',
    required: ['id', 'deployId', 'deployNumber', 'publishedAt', 'publishedBy', 'changes', 'breaking'],
    properties: {
      id: id('Publication id'),
      deployId: id('The deploy made live (it may since have been pruned)'),
      deployNumber: id("The deploy's number in its project"),
      publishedAt: text('When it went live', { format: 'date-time' }),
      publishedBy: nullableText('Who made it live (email); null for the system'),
      changes: {
        type: 'array',
        items: ref('Change'),
        description: 'The changes against the deploy live before',
      },
      breaking: { type: 'boolean' },
    },
  },
  Promotion: {
    type: 'object',
    required: ['deploy', 'publication'],
    properties: {
      deploy: ref('Deploy'),
      publication: ref('Publication'),
    },
  },
  DeployComparison: {
    type: 'object',
    required: ['deployId', 'againstId', 'changes', 'breaking'],
    properties: {
      deployId: id('The deploy compared (the new side)'),
      againstId: id('The deploy it is compared against (the old side)'),
      changes: { type: 'array', items: ref('Change') },
      breaking: { type: 'boolean' },
    },
  },
  DnsRecord: {
    type: 'object',
    required: ['type', 'name', 'value', 'ttl', 'role'],
    properties: {
      type: { type: 'string', enum: ['CNAME', 'ALIAS', 'A', 'AAAA', 'TXT'] },
      name: text('Name relative to the apex (@ for the apex)'),
      value: text('The exact value to enter'),
      ttl: { type: 'integer', enum: [3600] },
      role: { type: 'string', enum: ['required', 'alternative', 'ownership'] },
      note: text('Advice'),
    },
  },
  Domain: {
    type: 'object',
    required: [
      'hostname',
      'unicode',
      'project',
      'kind',
      'state',
      'status',
      'records',
      'createdAt',
      'reverifyAvailable',
    ],
    properties: {
      hostname: text('ASCII (punycode) hostname'),
      unicode: text('The hostname as people read it'),
      project: text('Project slug'),
      kind: { type: 'string', enum: ['apex', 'subdomain'] },
      state: { type: 'string', enum: ['unverified', 'verified', 'misconfigured', 'removed'] },
      reason: nullableText('Why it is not (or no longer) verified, machine-readable'),
      message: nullableText('What DNS showed at the last check'),
      remedy: nullableText('What to do'),
      records: { type: 'array', items: ref('DnsRecord') },
      verifiedAt: nullableText('When it was verified'),
      lastCheckedAt: nullableText('Last DNS check'),
      nextCheckAt: nullableText(
        'When the background checker next checks this domain (it looks for due checks every DOMAIN_CHECK_EVERY, 15 s by default). Unverified: 1 min after the last check, doubling to 1 h, until checksUntil; verified: every DOMAIN_RECHECK_INTERVAL (6 h). Null when no automatic check is scheduled: the propagation window closed (Verify restarts the checks) or the team’s plan no longer includes custom domains.',
      ),
      checksUntil: nullableText('Background checks stop then'),
      createdAt: text('When it was added'),
      status: {
        type: 'string',
        enum: ['unverified', 'verified', 'issuing', 'live', 'failed'],
        description:
          'What to show: unverified (waiting for DNS), verified (no certificate ordered yet), issuing (certificate being issued), live (served with a certificate), failed (see failure). The mapping from state, reason and certificate is in docs/decisions/dashboard.md.',
      },
      failure: {
        type: 'object',
        nullable: true,
        description: 'With status failed: why, and what to do',
        required: ['reason', 'message', 'remedy'],
        properties: {
          reason: text(
            'Machine-readable: a DNS check reason (conflicting_record, cname_mismatch…), a domain reason, caa_forbids or certificate_failed',
          ),
          message: nullableText('What was found'),
          remedy: text('What to do'),
        },
      },
      reverifyAvailableAt: nullableText('From when Re-verify is offered'),
      reverifyAvailable: {
        type: 'boolean',
        description: "Whether Re-verify is offered now, by the platform's clock",
      },
      certificate: {
        type: 'object',
        nullable: true,
        description: 'The certificate: null before verification',
        required: ['state'],
        properties: {
          state: { type: 'string', enum: ['none', 'pending', 'ordering', 'issued', 'failed'] },
          reason: nullableText('Why the last attempt failed'),
          notAfter: nullableText('Expiry of the certificate being served'),
          nextAttemptAt: nullableText('Next order, retry or renewal'),
        },
      },
    },
  },
  DnsOutcome: {
    type: 'object',
    required: ['ok', 'reason', 'message', 'remedy'],
    properties: {
      ok: { type: 'boolean' },
      reason: text('Machine-readable outcome'),
      message: text('What DNS shows'),
      remedy: text('What to do'),
      found: { type: 'object', additionalProperties: true, description: 'The records seen' },
    },
  },
  AddedDomain: {
    type: 'object',
    required: ['domain', 'warnings', 'dns'],
    properties: {
      domain: ref('Domain'),
      warnings: {
        type: 'array',
        items: { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' } } },
      },
      dns: {
        type: 'object',
        description: 'What DNS shows now, before Verify',
        properties: { check: ref('DnsOutcome'), caa: ref('DnsOutcome') },
      },
    },
  },
  CheckResult: {
    type: 'object',
    required: ['domain', 'outcome'],
    properties: { domain: ref('Domain'), outcome: ref('DnsOutcome') },
  },
  DomainEvent: {
    type: 'object',
    required: ['at', 'actor', 'action', 'outcome'],
    properties: {
      at: text('When'),
      actor: text('Who: user:<email> or system'),
      action: text(
        'What: add, verify, reverify, background, remove, taken_over, checks_stopped, certificate_issued, certificate_renewed, certificate_failed',
      ),
      outcome: text('The state after it'),
      detail: { type: 'object', nullable: true, additionalProperties: true },
      webhook: {
        type: 'object',
        nullable: true,
        description: "The webhook event this entry sent to the team's endpoint (docs/webhooks.md)",
        required: ['id', 'type', 'state', 'attempts', 'deliveredAt'],
        properties: {
          id: text('Message id, the webhook-id header'),
          type: text('Event type'),
          state: text('pending, delivered or failed', { enum: ['pending', 'delivered', 'failed'] }),
          attempts: { type: 'integer', minimum: 0 },
          deliveredAt: nullableText('When it was delivered'),
        },
      },
    },
  },
  DomainDetail: {
    type: 'object',
    required: ['domain', 'history'],
    properties: { domain: ref('Domain'), history: { type: 'array', items: ref('DomainEvent') } },
  },
  NewDomain: {
    type: 'object',
    required: ['hostname'],
    additionalProperties: false,
    properties: {
      hostname: text('The custom domain, e.g. shop.example.com', { minLength: 1, maxLength: 300 }),
    },
  },
  DomainConfigText: {
    type: 'object',
    required: ['yaml'],
    additionalProperties: false,
    properties: {
      yaml: text('The YAML domain configuration', { maxLength: 1024 * 1024 }),
      prune: { type: 'boolean', default: false, description: 'Also remove domains the file does not name' },
    },
  },
  Redirect: {
    type: 'object',
    required: ['from', 'to', 'status'],
    properties: {
      from: text('The custom domain that redirects (ASCII)'),
      to: text("Where it redirects: another custom domain of the project, or the project's default address"),
      status: { type: 'integer', enum: [301, 302, 307, 308], description: 'The HTTP redirect status' },
    },
  },
  CorsPolicy: {
    type: 'object',
    required: [
      'enabled',
      'allowedOrigins',
      'allowedMethods',
      'allowedHeaders',
      'exposeHeaders',
      'allowCredentials',
      'maxAgeSeconds',
    ],
    additionalProperties: false,
    description:
      "Which browser apps on other origins may call the project's published API (under /api/). Off by default.",
    properties: {
      enabled: { type: 'boolean', description: 'Whether the edge applies the policy' },
      allowedOrigins: {
        type: 'array',
        maxItems: 50,
        items: text(
          'An exact origin, scheme://host[:port] (e.g. https://app.example.com), or `*` alone without credentials',
          { maxLength: 300 },
        ),
      },
      allowedMethods: {
        type: 'array',
        maxItems: 50,
        items: text('A method a preflight may ask for, e.g. PUT; `*` for any (without credentials)', {
          maxLength: 40,
        }),
      },
      allowedHeaders: {
        type: 'array',
        maxItems: 50,
        items: text(
          'A request header a preflight may ask for, e.g. authorization; `*` for any (without credentials)',
          { maxLength: 100 },
        ),
      },
      exposeHeaders: {
        type: 'array',
        maxItems: 50,
        items: text('A response header browser apps may read, e.g. etag', { maxLength: 100 }),
      },
      allowCredentials: {
        type: 'boolean',
        description: 'Whether cookies and HTTP authentication go along; then no `*` anywhere',
      },
      maxAgeSeconds: {
        type: 'integer',
        minimum: 0,
        maximum: 86400,
        description: 'How long browsers may cache a preflight answer, in seconds',
      },
    },
  },
  DomainConfig: {
    type: 'object',
    required: ['yaml', 'primary', 'redirects'],
    properties: {
      yaml: text('The configuration as YAML, as export prints it and apply accepts'),
      primary: nullableText('The primary domain (ASCII), or null'),
      redirects: { type: 'array', items: ref('Redirect'), description: 'The redirects, by from' },
    },
  },
  TrafficPoint: {
    type: 'object',
    required: ['at', 'requests', 'errors', 'p50', 'p95', 'p99'],
    properties: {
      at: text("The interval's start (a minute, or an hour for ranges over 48 hours)", {
        format: 'date-time',
      }),
      requests: { type: 'integer', minimum: 0 },
      errors: { type: 'integer', minimum: 0, description: 'Answers with status 500 or above' },
      p50: latency('The median'),
      p95: latency('The 95th percentile'),
      p99: latency('The 99th percentile'),
    },
  },
  TrafficGroup: {
    type: 'object',
    required: ['key', 'requests', 'errors', 'p50', 'p95', 'p99'],
    properties: {
      key: text(
        "What the group is: the operation ('GET /pets/{petId}', 'unmatched', 'other'), the status code, or the caller's keyed hash",
      ),
      requests: { type: 'integer', minimum: 0 },
      errors: { type: 'integer', minimum: 0, description: 'Answers with status 500 or above' },
      p50: latency('The median (null by caller: callers are counted without latency)'),
      p95: latency('The 95th percentile'),
      p99: latency('The 99th percentile'),
      bytesIn: { type: 'integer', minimum: 0, description: 'Request bytes (by operation and by status)' },
      bytesOut: { type: 'integer', minimum: 0, description: 'Response bytes (by operation and by status)' },
      operation: text('By operation: the operation'),
      deprecated: { type: 'boolean', description: 'By operation: marked deprecated in the live document' },
      sunset: { ...nullableText('By operation: its sunset (x-sunset), or null'), format: 'date-time' },
      caller: text("By caller: its label, a key's first characters (key:sk_liv…) or a truncated address"),
      callerKind: text(
        "By caller: what identifies it, 'key' or 'address' ('other' counts callers past the cap)",
      ),
      lastSeenAt: text('By caller: its last request', { format: 'date-time' }),
    },
  },
  ProjectTraffic: {
    type: 'object',
    required: ['from', 'to', 'interval', 'totals', 'series', 'grouping', 'groups'],
    properties: {
      from: text('Start of the range: the start of the interval holding since (inclusive)', {
        format: 'date-time',
      }),
      to: text('End of the range: the end of the interval holding until (exclusive)', {
        format: 'date-time',
      }),
      interval: {
        type: 'string',
        enum: ['minute', 'hour'],
        description: 'Minutes for ranges up to 48 hours, hours beyond',
      },
      totals: {
        type: 'object',
        required: ['requests', 'errors', 'p50', 'p95', 'p99'],
        properties: {
          requests: { type: 'integer', minimum: 0 },
          errors: { type: 'integer', minimum: 0 },
          p50: latency('The median'),
          p95: latency('The 95th percentile'),
          p99: latency('The 99th percentile'),
        },
      },
      series: {
        type: 'array',
        items: ref('TrafficPoint'),
        description: 'One point per interval, oldest first',
      },
      grouping: { type: 'string', enum: ['operation', 'caller', 'status'] },
      groups: {
        type: 'array',
        items: ref('TrafficGroup'),
        description: 'The busiest 200 groups, most requests first',
      },
    },
  },
  RequestLog: {
    type: 'object',
    required: [
      'id',
      'at',
      'method',
      'operation',
      'path',
      'status',
      'latencyMs',
      'bytesIn',
      'bytesOut',
      'caller',
      'requestId',
    ],
    properties: {
      id: id('Grows in the order entries were stored, across edge nodes: the cursor'),
      at: text('When the request arrived', { format: 'date-time' }),
      method: text('HTTP method'),
      operation: text("The operation ('GET /pets/{petId}'), 'unmatched' or 'other'"),
      path: text("The path, with the query string's names kept and values dropped (/pets?limit=)"),
      status: { type: 'integer' },
      latencyMs: { type: 'number', minimum: 0, description: 'From arrival to the end of the answer' },
      bytesIn: { type: 'integer', minimum: 0 },
      bytesOut: { type: 'integer', minimum: 0 },
      caller: nullableText("The caller's label (key:sk_liv…, 203.0.113.0/24), never its credential"),
      requestId: nullableText('The request id (X-Request-Id)'),
    },
  },
  RequestLogPage: {
    type: 'object',
    required: ['logs'],
    properties: {
      logs: {
        type: 'array',
        items: ref('RequestLog'),
        description: 'Newest first; the next page is before the last id',
      },
    },
  },
  DeprecationReach: {
    type: 'object',
    required: ['operations'],
    properties: {
      operations: {
        type: 'array',
        description: 'Each deprecated operation of the live deploy',
        items: {
          type: 'object',
          required: ['operation', 'sunset', 'callers'],
          properties: {
            operation: text("'GET /pets/{petId}'"),
            sunset: { ...nullableText('Its sunset (x-sunset), or null'), format: 'date-time' },
            callers: {
              type: 'array',
              description: 'Who called it in the last 7 days (UTC days), most requests first',
              items: {
                type: 'object',
                required: ['caller', 'callerKind', 'requests', 'lastSeenAt'],
                properties: {
                  caller: text("The caller's label, never its credential"),
                  callerKind: text("'key' or 'address' ('other' counts callers past the cap)"),
                  requests: { type: 'integer', minimum: 0 },
                  lastSeenAt: text('Its last call', { format: 'date-time' }),
                },
              },
            },
          },
        },
      },
    },
  },
  ApplyResult: {
    type: 'object',
    required: ['added', 'removed', 'yaml', 'primary', 'redirects'],
    properties: {
      added: { type: 'array', items: { type: 'string' } },
      removed: { type: 'array', items: { type: 'string' } },
      yaml: text('The configuration now, as export prints it'),
      primary: nullableText('The primary domain now (ASCII), or null'),
      redirects: { type: 'array', items: ref('Redirect'), description: 'The redirects now, by from' },
    },
  },
};
