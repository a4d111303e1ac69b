import { type JsonSchema, ref } from '../../lib/http-api/index.ts';
import { PLAN_NAMES } from '../plans.ts';

/*
 * Builders for the shapes the schemas repeat: each says what the value is, so a schema reads as
 * its fields. A description left out is left out of the document too.
 */
const described = (description: string | undefined): JsonSchema =>
  description === undefined ? {} : { description };
const text = (description: string, extra: JsonSchema = {}): JsonSchema => ({
  type: 'string',
  description,
  ...extra,
});
const nullableText = (description: string): JsonSchema => ({ type: 'string', nullable: true, description });
const time = (description: string): JsonSchema => text(description, { format: 'date-time' });
const nullableTime = (description: string): JsonSchema => ({
  ...nullableText(description),
  format: 'date-time',
});
const uri = (description: string): JsonSchema => text(description, { format: 'uri' });
const id = (description: string): JsonSchema => ({ type: 'integer', minimum: 1, description });
const count = (description?: string): JsonSchema => ({
  type: 'integer',
  minimum: 0,
  ...described(description),
});
const flag = (description?: string): JsonSchema => ({ type: 'boolean', ...described(description) });
const oneOf = (values: readonly (string | number)[], description?: string): JsonSchema => ({
  type: typeof values[0] === 'number' ? 'integer' : 'string',
  enum: values,
  ...described(description),
});
const list = (items: JsonSchema, description?: string): JsonSchema => ({
  type: 'array',
  items,
  ...described(description),
});
/** An object as answered: `required` are always there. */
const answer = (
  required: readonly string[],
  properties: Record<string, JsonSchema>,
  extra: JsonSchema = {},
): JsonSchema => ({ type: 'object', ...(required.length > 0 && { required }), properties, ...extra });
/** An object as answered, every property always there. */
const whole = (properties: Record<string, JsonSchema>): JsonSchema =>
  answer(Object.keys(properties), properties);
/** An object as sent (a request body): as `answer`, and no property it does not name. */
const input = (
  required: readonly string[],
  properties: Record<string, JsonSchema>,
  extra: JsonSchema = {},
): JsonSchema => answer(required, properties, { additionalProperties: false, ...extra });
/** The schema `base` with more properties (what creating it answers, its secret with it). */
const extend = (base: string, required: readonly string[], properties: Record<string, JsonSchema>) => ({
  allOf: [ref(base), answer(required, properties)],
});
const latency = (description: string): JsonSchema => ({
  type: 'number',
  nullable: true,
  minimum: 0,
  description: `${description}, in ms, within 1% (LatencySketch.RELATIVE_ACCURACY); null without requests`,
});
const percentiles = (median = 'The median') => ({
  p50: latency(median),
  p95: latency('The 95th percentile'),
  p99: latency('The 99th percentile'),
});
const ROLES = ['owner', 'member'];
const MESSAGE_STATES = ['pending', 'delivered', 'failed'];
const email = (description: string): JsonSchema => text(description, { minLength: 3, maxLength: 254 });
const name = (description: string): JsonSchema => text(description, { minLength: 1, maxLength: 100 });
const password = (description: string): JsonSchema => text(description, { minLength: 12, maxLength: 1024 });
const secretToken = (description: string): JsonSchema => text(description, { minLength: 1, maxLength: 200 });
const origin = (description: string): JsonSchema => text(description, { minLength: 1, maxLength: 2048 });
const changes = (description?: string): JsonSchema => list(ref('Change'), description);
const problemDetails = (description: string): JsonSchema =>
  list(
    answer(['pointer', 'line', 'column', 'message'], {
      pointer: text("JSON pointer (RFC 6901) into the document; '' for the whole document"),
      line: { type: 'integer', nullable: true, description: '1-based line in the uploaded text' },
      column: { type: 'integer', nullable: true, description: '1-based column in the uploaded text' },
      message: text('What is wrong, and what to do'),
    }),
    description,
  );
/** A CORS policy's list: at most 50 entries of at most `maxLength` characters. */
const corsList = (description: string, maxLength: number): JsonSchema => ({
  ...list(text(description, { maxLength })),
  maxItems: 50,
});

/** The management API's resources, as named schemas of its OpenAPI document. */
export const platformSchemas: Record<string, JsonSchema> = {
  Error: answer(['code', 'message', 'status'], {
    code: text('Machine-readable error code (docs/platform-api.md)', { pattern: '^[a-z][a-z0-9_]*$' }),
    message: text('What went wrong and what to do'),
    status: { type: 'integer', minimum: 400, maximum: 599, description: 'The HTTP status' },
    changes: changes(
      'With breaking_changes: the changes against the live deploy, the breaking ones among them',
    ),
    problems: list(
      answer(['field', 'message'], {
        field: text('The field'),
        message: text('What is wrong and how to fix it'),
      }),
      'With invalid_cors_policy: each problem under the field it is about',
    ),
  }),
  Credentials: input(['email', 'password'], {
    email: email('Account email'),
    password: text('Account password', { minLength: 1, maxLength: 1024 }),
  }),
  Session: answer(['email', 'isAdmin', 'csrfToken', 'expiresAt'], {
    email: text('Signed-in account'),
    isAdmin: flag(),
    csrfToken: text('Send it back as X-CSRF-Token on every change made with the session cookie'),
    expiresAt: time('When the session ends'),
  }),
  Me: answer(['email', 'isAdmin'], {
    email: text('Account email'),
    isAdmin: flag(),
    csrfToken: text(
      "The session's CSRF token, when signed in with the dashboard cookie (so a reloaded page can make changes)",
    ),
  }),
  SessionState: answer(['signedIn'], {
    signedIn: flag('Whether the request carried a live dashboard session cookie'),
    email: text('Signed-in account (signed in only)'),
    isAdmin: flag('Platform admin (signed in only)'),
    csrfToken: text("The session's CSRF token, for X-CSRF-Token on changes (signed in only)"),
  }),
  NewToken: input(['name'], {
    name: name('What the token is for, e.g. "laptop CLI"'),
    expiresInDays: {
      type: 'integer',
      minimum: 1,
      maximum: 366,
      nullable: true,
      description:
        'Days until the token stops working (401 token_expired after); left out or null: it never expires',
    },
    scope: {
      ...oneOf(
        ['full', 'read'],
        'full: everything your account may do; read: GET and HEAD only (any change answers 403 token_read_only)',
      ),
      default: 'full',
    },
  }),
  Token: answer(['id', 'name', 'prefix', 'createdAt', 'expiresAt', 'scope'], {
    id: id('Token id'),
    name: text('Token name'),
    prefix: text('The first characters of the token, to recognise it'),
    createdAt: time('Creation time'),
    lastUsedAt: nullableText('Last use'),
    expiresAt: nullableTime('When it stops working (null: never)'),
    scope: oneOf(['full', 'read'], 'full, or read (GET and HEAD only)'),
  }),
  CreatedToken: extend('Token', ['token'], {
    token: text('The secret: shown this once, stored only as a hash'),
  }),
  WebhookEndpointChange: input(['url'], {
    url: text('Where events are POSTed: https:// (http:// only to loopback), see docs/webhooks.md', {
      minLength: 1,
      maxLength: 2000,
    }),
  }),
  WebhookEndpoint: answer(['teamId', 'url', 'secretHint', 'createdAt', 'updatedAt'], {
    teamId: id('Team id'),
    url: text('Where events are POSTed'),
    secretHint: text('The last characters of the signing secret, to recognise it'),
    createdAt: time('Creation time'),
    updatedAt: time('Last change'),
  }),
  WebhookEndpointSet: answer(['endpoint', 'secret'], {
    endpoint: ref('WebhookEndpoint'),
    secret: nullableText(
      'The signing secret (whsec_…), only when the endpoint is created or its secret rotated: shown this once',
    ),
  }),
  WebhookDelivery: answer(['id', 'type', 'state', 'attempts', 'createdAt', 'payload', 'log'], {
    id: text('Message id: the webhook-id header, the same on every attempt'),
    type: text('Event type, e.g. domain.verified'),
    state: oneOf(
      MESSAGE_STATES,
      'pending (being attempted or waiting for a retry), delivered, failed (retries exhausted)',
    ),
    attempts: count('Attempts in the current schedule'),
    nextAttemptAt: nullableText('When the next attempt is due'),
    lastStatus: { type: 'integer', nullable: true, description: 'HTTP status of the last attempt' },
    lastError: nullableText('Why the last attempt failed'),
    createdAt: time('When the event happened'),
    deliveredAt: nullableText('When it was delivered'),
    payload: { type: 'object', additionalProperties: true, description: 'The body as sent' },
    log: list(
      answer(['attempt', 'at', 'statusCode', 'durationMs', 'error', 'ok'], {
        attempt: { type: 'integer', minimum: 1 },
        at: time('When'),
        statusCode: { type: 'integer', nullable: true },
        durationMs: count(),
        error: nullableText('Why it failed'),
        ok: flag(),
      }),
    ),
  }),
  Team: answer(['id', 'name', 'plan'], {
    id: id('Team id'),
    name: text('Team name'),
    plan: oneOf(PLAN_NAMES),
    role: {
      type: 'string',
      enum: [...ROLES, null],
      nullable: true,
      description: 'Your role (null for admins outside the team)',
    },
  }),
  NewTeam: input(['name'], { name: name('Team name') }),
  TeamChange: input(['name'], { name: name('The new team name') }),
  PlanChange: input(['plan'], { plan: oneOf(PLAN_NAMES) }),
  NewMember: input(['email'], {
    email: email('Email of the person to invite (with or without an account)'),
    role: { ...oneOf(ROLES), default: 'member' },
  }),
  TeamMember: answer(['userId', 'email', 'name', 'role', 'since'], {
    userId: id('User id'),
    email: text('Account email'),
    name: nullableText('The name given when joining (null for accounts made before names)'),
    role: oneOf(ROLES),
    since: time('When they joined the team'),
  }),
  RoleChange: input(['role'], { role: oneOf(ROLES) }),
  NewInvitation: input(['email'], { email: email('Email of the person to invite') }),
  Invitation: answer(['id', 'teamId', 'email', 'role', 'createdAt', 'expiresAt', 'status'], {
    id: id('Invitation id'),
    teamId: id('The team'),
    email: text('Who is invited'),
    role: oneOf(ROLES, 'The role on joining'),
    createdAt: time('When it was made'),
    expiresAt: time('When the token stops working'),
    status: oneOf(['pending', 'accepted', 'revoked', 'expired']),
  }),
  CreatedInvitation: extend('Invitation', ['mailed'], {
    token: text(
      'The one-time invitation token (kin_…), shown only here and only when it was not mailed (pass it on over a channel you trust)',
    ),
    url: uri(
      'When not mailed: the dashboard link that accepts it, on the platform address the request came to: <address>/invitations/accept#token=kin_… (the token in the fragment, which browsers never send to a server)',
    ),
    mailed: flag(
      'Whether it was mailed (SMTP_URL set and the server took it): then the token is only in the mail, and accepting it proves the email. Otherwise the answer holds `token` and `url`',
    ),
  }),
  InvitationToken: input(['token'], { token: secretToken('The invitation token') }),
  InvitationDetails: answer(['teamId', 'teamName', 'email', 'role', 'expiresAt', 'invitedBy'], {
    teamId: id('The team to join'),
    teamName: text('Its name'),
    email: text('The invited email'),
    role: oneOf(ROLES, 'The role to join with'),
    expiresAt: time('Until when the link works'),
    invitedBy: answer(
      ['name', 'email'],
      { name: nullableText('Their name'), email: text('Their email') },
      { nullable: true, description: 'The owner who invited (null when that account is gone)' },
    ),
  }),
  InvitationAcceptance: input(['token', 'password'], {
    token: secretToken('The invitation token'),
    name: name('Your name (for a new account)'),
    password: password(
      'A new password (at least 12 characters), or your current one if the email has an account',
    ),
  }),
  AcceptedInvitation: answer(['email', 'teamId', 'role'], {
    email: text('Your account'),
    teamId: id('The team joined'),
    role: oneOf(ROLES),
  }),
  SignUp: input(['email', 'name', 'password'], {
    email: email('Account email'),
    name: name('Your name'),
    password: password('Password, at least 12 characters'),
  }),
  SignedUp: answer(['email', 'name', 'teamId'], {
    email: text('Account email'),
    name: text('Your name'),
    teamId: id('The team made for you, which you own'),
  }),
  PasswordResetPolicy: answer(['byMail'], {
    byMail: flag(
      'Whether POST /api/v1/password-reset/request mails reset links (SMTP_URL is set); otherwise ask a team owner or the operator',
    ),
  }),
  PasswordResetRequest: input(['email'], { email: email('Your account email') }),
  PasswordResetRequested: answer(['message'], {
    message: text('The same for every email: what happens next'),
  }),
  SignUpPolicy: answer(['open'], {
    open: flag('Whether POST /api/v1/users takes sign-ups (KENNEL_OPEN_SIGNUP=on)'),
  }),
  PasswordChange: input(['currentPassword', 'newPassword'], {
    currentPassword: text('Your current password', { minLength: 1, maxLength: 1024 }),
    newPassword: password('The new password, at least 12 characters'),
  }),
  PasswordResetLink: answer(['userId', 'email', 'token', 'url', 'expiresAt'], {
    userId: id('The member'),
    email: text('Their email'),
    token: text('The one-time reset token (krs_…), shown only here'),
    url: uri(
      'The dashboard link that uses it: <address>/reset-password#token=krs_… (the token in the fragment)',
    ),
    expiresAt: time('When the token stops working'),
  }),
  PasswordResetRedemption: input(['token', 'password'], {
    token: secretToken('The reset token'),
    password: password('The new password, at least 12 characters'),
  }),
  PasswordResetDone: answer(['email', 'sessionsEnded', 'tokensRevoked'], {
    email: text('The account whose password was set'),
    sessionsEnded: count('Sessions of the account signed out'),
    tokensRevoked: count('API tokens of the account revoked'),
  }),
  NewProject: input(['teamId', 'slug', 'name', 'originUrl'], {
    teamId: id('The team that owns the project'),
    slug: text('DNS label of the default address <slug>.<platform domain>', {
      minLength: 1,
      maxLength: 63,
    }),
    name: name('Display name'),
    originUrl: origin(
      "Where the API runs: an http or https URL at a public address, without user name or password; a private origin only with a platform admin's grant to the team (OriginGrant)",
    ),
  }),
  NewOriginGrant: input(['teamId', 'origin'], {
    teamId: id('The team whose projects may reach the origin'),
    origin: origin(
      'An origin, scheme://host:port (no path), e.g. http://10.0.0.5:8080; or KENNEL_ORIGIN_ALLOWLIST for every origin of that setting',
    ),
  }),
  OriginGrant: answer(['id', 'teamId', 'teamName', 'origin', 'grantedBy', 'createdAt'], {
    id: id('Grant id'),
    teamId: id('The team'),
    teamName: text('The team name'),
    origin: text('The origin as compared (URL.origin), or KENNEL_ORIGIN_ALLOWLIST'),
    grantedBy: nullableText("The granting admin's email; null for the first start's grant"),
    createdAt: time('When it was granted'),
  }),
  ProjectChange: input(
    [],
    {
      name: name('New display name'),
      originUrl: origin(
        'New origin: checked as at creation (http or https, no user name or password, a public address unless the team has a grant)',
      ),
    },
    { minProperties: 1, description: 'What to change; the slug never changes (it is the published host)' },
  ),
  ProjectDeletion: answer(['slug', 'domains', 'certificates', 'deploys'], {
    slug: text('Project slug'),
    domains: count('Custom domains (not already removed)'),
    certificates: count("Certificates of the project's domains"),
    deploys: count('Deploys, previews included'),
  }),
  Project: answer(['slug', 'name', 'teamId', 'originUrl', 'plan', 'defaultHost'], {
    slug: text('Project slug'),
    name: text('Display name'),
    teamId: id('Owning team'),
    originUrl: text('Origin of the API'),
    plan: oneOf(PLAN_NAMES),
    defaultHost: text('The default address, <slug>.<platform domain>'),
    activeDeployId: { type: 'integer', nullable: true },
    primaryDomain: nullableText('The primary custom domain'),
  }),
  NewDeploy: input(['document'], {
    document: text(
      'The OpenAPI 3.0.x or 3.1.x document, JSON or YAML text; its size is bounded by the deploy body limit (DEPLOY_BODY_LIMIT, 32 MiB by default) and, parsed, by the DEPLOY_MAX_* settings',
      { minLength: 1 },
    ),
    originUrl: origin(
      'A new origin for the project (optional; a public address, unless the operator allowlists it)',
    ),
    allowBreaking: {
      ...flag(
        'Publish even when the changes against the live deploy break callers (otherwise 409 breaking_changes)',
      ),
      default: false,
    },
    dryRun: {
      ...flag(
        'Only check: answer 200 with the problems and the changes against the live deploy, deploy and store nothing',
      ),
      default: false,
    },
    preview: {
      ...flag(
        'Store it as a preview, which never changes the live site (no gate, no publication); promote it later with promoteDeploy',
      ),
      default: false,
    },
  }),
  Deploy: answer(
    [
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
    {
      id: id('Deploy id'),
      number: id("The deploy's number in its project, counting from 1 (#1 is the first deploy)"),
      preview: flag('Made as a preview (it went live only if promoted since)'),
      createdBy: nullableText("Who made it (the account's email); null for the system"),
      changes: changes(
        'The changes against the deploy live when it was made (empty for the first deploy and for failed ones)',
      ),
      breaking: flag('Whether any of the changes is breaking'),
      status: oneOf(['succeeded', 'failed']),
      originUrl: text('Origin at this deploy'),
      sourceFormat: oneOf(['json', 'yaml']),
      problems: list(
        { type: 'string' },
        "A failed deploy's problems, one line each: where (JSON pointer, line and column) and what to do (problemDetails as text)",
      ),
      problemDetails: problemDetails(
        "A failed deploy's problems, all of them at once (at most 100), each with its place",
      ),
      active: flag(),
      createdAt: time('When it was deployed'),
    },
  ),
  NewPreviewLink: input([], {
    expiresIn: {
      type: 'integer',
      minimum: 300,
      maximum: 2592000,
      default: 604800,
      description:
        'Seconds until the link stops opening the preview: 300 (five minutes) to 2592000 (thirty days); a week when left out',
    },
  }),
  PreviewLink: answer(
    ['id', 'deployId', 'host', 'createdBy', 'createdAt', 'expiresAt', 'revokedAt', 'active'],
    {
      id: id('Share link id'),
      deployId: id('The preview deploy it opens'),
      host: text("The preview's address, <slug>--<deployId>.<platform domain>"),
      createdBy: nullableText('Who made it (email)'),
      createdAt: time('When it was made'),
      expiresAt: time('When it stops opening the preview'),
      revokedAt: nullableText('When a team member revoked it'),
      active: flag('Whether it opens the preview now (neither revoked nor expired)'),
    },
  ),
  CreatedPreviewLink: extend('PreviewLink', ['token', 'url'], {
    token: text('The secret (kpl_…), shown only here; stored as a hash'),
    url: uri(
      'The link to pass on: <preview address>/?kennel_preview=kpl_…; whoever opens it gets a cookie for the preview host and the clean URL',
    ),
  }),
  PreviewAccess: answer(['url', 'expiresAt'], {
    url: uri(
      "The preview's address with a one-time hand-off token (kph_…), also in Location: open it in the browser within a minute",
    ),
    expiresAt: time('When the hand-off token stops working'),
  }),
  Change: answer(['id', 'level', 'location', 'message'], {
    id: text("The rule, stable and kebab-case, e.g. 'operation-removed' (docs/changes.md lists them)"),
    level: oneOf(
      ['breaking', 'warning', 'info'],
      'breaking: some caller fails; warning: a caller may; info: nothing breaks',
    ),
    operation: text("The operation it belongs to, e.g. 'GET /pets/{petId}'"),
    location: text('JSON pointer into the new document (into the old one for removals)'),
    message: text('What changed, in a sentence'),
    traffic: answer(
      ['requests', 'callers'],
      { requests: count(), callers: count() },
      {
        description:
          "On a breaking change of an operation, in a deploy's or a promotion's answer (and the 409): how many calls it had, and from how many distinct callers, in the last 7 days (docs/traffic.md)",
      },
    ),
  }),
  DeployCheck: answer(['valid', 'problems', 'changes', 'breaking'], {
    valid: flag('Whether the document would deploy'),
    problems: list({ type: 'string' }, "Why it would fail, one line each, as a failed deploy's problems"),
    problemDetails: problemDetails("The problems with their places, as a failed deploy's problemDetails"),
    changes: changes('The changes against the live deploy (empty when invalid or nothing is live)'),
    breaking: flag('Whether deploying it would be refused with 409 breaking_changes without allowBreaking'),
  }),
  PromoteDeploy: input([], {
    allowBreaking: {
      ...flag(
        'Publish even when its changes against the live deploy break callers (otherwise 409 breaking_changes)',
      ),
      default: false,
    },
  }),
  Publication: answer(
    ['id', 'deployId', 'deployNumber', 'publishedAt', 'publishedBy', 'changes', 'breaking'],
    {
      id: id('Publication id'),
      deployId: id('The deploy made live (it may since have been pruned)'),
      deployNumber: id("The deploy's number in its project"),
      publishedAt: time('When it went live'),
      publishedBy: nullableText('Who made it live (email); null for the system'),
      changes: changes('The changes against the deploy live before'),
      breaking: flag(),
    },
  ),
  Promotion: answer(['deploy', 'publication'], { deploy: ref('Deploy'), publication: ref('Publication') }),
  DeployComparison: answer(['deployId', 'againstId', 'changes', 'breaking'], {
    deployId: id('The deploy compared (the new side)'),
    againstId: id('The deploy it is compared against (the old side)'),
    changes: changes(),
    breaking: flag(),
  }),
  DnsRecord: answer(['type', 'name', 'value', 'ttl', 'role'], {
    type: oneOf(['CNAME', 'ALIAS', 'A', 'AAAA', 'TXT']),
    name: text('Name relative to the apex (@ for the apex)'),
    value: text('The exact value to enter'),
    ttl: oneOf([3600]),
    role: oneOf(['required', 'alternative', 'ownership']),
    note: text('Advice'),
  }),
  Domain: answer(
    [
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
    {
      hostname: text('ASCII (punycode) hostname'),
      unicode: text('The hostname as people read it'),
      project: text('Project slug'),
      kind: oneOf(['apex', 'subdomain']),
      state: oneOf(['unverified', 'verified', 'misconfigured', 'removed']),
      reason: nullableText('Why it is not (or no longer) verified, machine-readable'),
      message: nullableText('What DNS showed at the last check'),
      remedy: nullableText('What to do'),
      records: list(ref('DnsRecord')),
      verifiedAt: nullableText('When it was verified'),
      lastCheckedAt: nullableText('Last DNS check'),
      nextCheckAt: nullableText(
        'When the background checker next checks this domain (it looks for due checks every DOMAIN_CHECK_EVERY, 15 s by default). Unverified: 1 min after the last check, doubling to 1 h, until checksUntil; verified: every DOMAIN_RECHECK_INTERVAL (6 h). Null when no automatic check is scheduled: the propagation window closed (Verify restarts the checks) or the team’s plan no longer includes custom domains.',
      ),
      checksUntil: nullableText('Background checks stop then'),
      createdAt: text('When it was added'),
      status: oneOf(
        ['unverified', 'verified', 'issuing', 'live', 'failed'],
        'What to show: unverified (waiting for DNS), verified (no certificate ordered yet), issuing (certificate being issued), live (served with a certificate), failed (see failure). The mapping from state, reason and certificate is in docs/decisions/dashboard.md.',
      ),
      failure: answer(
        ['reason', 'message', 'remedy'],
        {
          reason: text(
            'Machine-readable: a DNS check reason (conflicting_record, cname_mismatch…), a domain reason, caa_forbids or certificate_failed',
          ),
          message: nullableText('What was found'),
          remedy: text('What to do'),
        },
        { nullable: true, description: 'With status failed: why, and what to do' },
      ),
      reverifyAvailableAt: nullableText('From when Re-verify is offered'),
      reverifyAvailable: flag("Whether Re-verify is offered now, by the platform's clock"),
      certificate: answer(
        ['state'],
        {
          state: oneOf(['none', 'pending', 'ordering', 'issued', 'failed']),
          reason: nullableText('Why the last attempt failed'),
          notAfter: nullableText('Expiry of the certificate being served'),
          nextAttemptAt: nullableText('Next order, retry or renewal'),
        },
        { nullable: true, description: 'The certificate: null before verification' },
      ),
    },
  ),
  DnsOutcome: answer(['ok', 'reason', 'message', 'remedy'], {
    ok: flag(),
    reason: text('Machine-readable outcome'),
    message: text('What DNS shows'),
    remedy: text('What to do'),
    found: { type: 'object', additionalProperties: true, description: 'The records seen' },
  }),
  AddedDomain: answer(['domain', 'warnings', 'dns'], {
    domain: ref('Domain'),
    warnings: list(answer([], { code: { type: 'string' }, message: { type: 'string' } })),
    dns: answer(
      [],
      { check: ref('DnsOutcome'), caa: ref('DnsOutcome') },
      { description: 'What DNS shows now, before Verify' },
    ),
  }),
  CheckResult: answer(['domain', 'outcome'], { domain: ref('Domain'), outcome: ref('DnsOutcome') }),
  DomainEvent: answer(['at', 'actor', 'action', 'outcome'], {
    at: text('When'),
    actor: text('Who: user:<email> or system'),
    action: text(
      'What: add, verify, reverify, background, remove, taken_over, checks_stopped, certificate_issued, certificate_renewed, certificate_failed',
    ),
    outcome: text('The state after it'),
    detail: { type: 'object', nullable: true, additionalProperties: true },
    webhook: answer(
      ['id', 'type', 'state', 'attempts', 'deliveredAt'],
      {
        id: text('Message id, the webhook-id header'),
        type: text('Event type'),
        state: oneOf(MESSAGE_STATES, 'pending, delivered or failed'),
        attempts: count(),
        deliveredAt: nullableText('When it was delivered'),
      },
      {
        nullable: true,
        description: "The webhook event this entry sent to the team's endpoint (docs/webhooks.md)",
      },
    ),
  }),
  DomainDetail: answer(['domain', 'history'], { domain: ref('Domain'), history: list(ref('DomainEvent')) }),
  NewDomain: input(['hostname'], {
    hostname: text('The custom domain, e.g. shop.example.com', { minLength: 1, maxLength: 300 }),
  }),
  DomainConfigText: input(['yaml'], {
    yaml: text('The YAML domain configuration', { maxLength: 1024 * 1024 }),
    prune: { ...flag('Also remove domains the file does not name'), default: false },
  }),
  Redirect: answer(['from', 'to', 'status'], {
    from: text('The custom domain that redirects (ASCII)'),
    to: text("Where it redirects: another custom domain of the project, or the project's default address"),
    status: oneOf([301, 302, 307, 308], 'The HTTP redirect status'),
  }),
  CorsPolicy: input(
    [
      'enabled',
      'allowedOrigins',
      'allowedMethods',
      'allowedHeaders',
      'exposeHeaders',
      'allowCredentials',
      'maxAgeSeconds',
    ],
    {
      enabled: flag('Whether the edge applies the policy'),
      allowedOrigins: corsList(
        'An exact origin, scheme://host[:port] (e.g. https://app.example.com), or `*` alone without credentials',
        300,
      ),
      allowedMethods: corsList(
        'A method a preflight may ask for, e.g. PUT; `*` for any (without credentials)',
        40,
      ),
      allowedHeaders: corsList(
        'A request header a preflight may ask for, e.g. authorization; `*` for any (without credentials)',
        100,
      ),
      exposeHeaders: corsList('A response header browser apps may read, e.g. etag', 100),
      allowCredentials: flag('Whether cookies and HTTP authentication go along; then no `*` anywhere'),
      maxAgeSeconds: {
        type: 'integer',
        minimum: 0,
        maximum: 86400,
        description: 'How long browsers may cache a preflight answer, in seconds',
      },
    },
    {
      description:
        "Which browser apps on other origins may call the project's published API (under /api/). Off by default.",
    },
  ),
  DomainConfig: answer(['yaml', 'primary', 'redirects'], {
    yaml: text('The configuration as YAML, as export prints it and apply accepts'),
    primary: nullableText('The primary domain (ASCII), or null'),
    redirects: list(ref('Redirect'), 'The redirects, by from'),
  }),
  TrafficPoint: answer(['at', 'requests', 'errors', 'p50', 'p95', 'p99'], {
    at: time("The interval's start (a minute, or an hour for ranges over 48 hours)"),
    requests: count(),
    errors: count('Answers with status 500 or above'),
    ...percentiles(),
  }),
  TrafficGroup: answer(['key', 'requests', 'errors', 'p50', 'p95', 'p99'], {
    key: text(
      "What the group is: the operation ('GET /pets/{petId}', 'unmatched', 'other'), the status code, or the caller's keyed hash",
    ),
    requests: count(),
    errors: count('Answers with status 500 or above'),
    ...percentiles('The median (null by caller: callers are counted without latency)'),
    bytesIn: count('Request bytes (by operation and by status)'),
    bytesOut: count('Response bytes (by operation and by status)'),
    operation: text('By operation: the operation'),
    deprecated: flag('By operation: marked deprecated in the live document'),
    sunset: nullableTime('By operation: its sunset (x-sunset), or null'),
    caller: text("By caller: its label, a key's first characters (key:sk_liv…) or a truncated address"),
    callerKind: text(
      "By caller: what identifies it, 'key' or 'address' ('other' counts callers past the cap)",
    ),
    lastSeenAt: time('By caller: its last request'),
  }),
  ProjectTraffic: answer(['from', 'to', 'interval', 'totals', 'series', 'grouping', 'groups'], {
    from: time('Start of the range: the start of the interval holding since (inclusive)'),
    to: time('End of the range: the end of the interval holding until (exclusive)'),
    interval: oneOf(['minute', 'hour'], 'Minutes for ranges up to 48 hours, hours beyond'),
    totals: answer(['requests', 'errors', 'p50', 'p95', 'p99'], {
      requests: count(),
      errors: count(),
      ...percentiles(),
    }),
    series: list(ref('TrafficPoint'), 'One point per interval, oldest first'),
    grouping: oneOf(['operation', 'caller', 'status']),
    groups: list(ref('TrafficGroup'), 'The busiest 200 groups, most requests first'),
  }),
  RequestLog: whole({
    id: id('Grows in the order entries were stored, across edge nodes: the cursor'),
    at: time('When the request arrived'),
    method: text('HTTP method'),
    operation: text("The operation ('GET /pets/{petId}'), 'unmatched' or 'other'"),
    path: text("The path, with the query string's names kept and values dropped (/pets?limit=)"),
    status: { type: 'integer' },
    latencyMs: { type: 'number', minimum: 0, description: 'From arrival to the end of the answer' },
    bytesIn: count(),
    bytesOut: count(),
    caller: nullableText("The caller's label (key:sk_liv…, 203.0.113.0/24), never its credential"),
    requestId: nullableText('The request id (X-Request-Id)'),
  }),
  RequestLogPage: answer(['logs'], {
    logs: list(ref('RequestLog'), 'Newest first; the next page is before the last id'),
  }),
  DeprecationReach: answer(['operations'], {
    operations: list(
      answer(['operation', 'sunset', 'callers'], {
        operation: text("'GET /pets/{petId}'"),
        sunset: nullableTime('Its sunset (x-sunset), or null'),
        callers: list(
          answer(['caller', 'callerKind', 'requests', 'lastSeenAt'], {
            caller: text("The caller's label, never its credential"),
            callerKind: text("'key' or 'address' ('other' counts callers past the cap)"),
            requests: count(),
            lastSeenAt: time('Its last call'),
          }),
          'Who called it in the last 7 days (UTC days), most requests first',
        ),
      }),
      'Each deprecated operation of the live deploy',
    ),
  }),
  ApplyResult: answer(['added', 'removed', 'yaml', 'primary', 'redirects'], {
    added: list({ type: 'string' }),
    removed: list({ type: 'string' }),
    yaml: text('The configuration now, as export prints it'),
    primary: nullableText('The primary domain now (ASCII), or null'),
    redirects: list(ref('Redirect'), 'The redirects now, by from'),
  }),
};
