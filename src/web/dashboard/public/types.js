// @ts-check
/**
 * The management API's answers as the dashboard reads them (the OpenAPI document at
 * /api/v1/openapi.json is the reference), and what the shell hands each page. Types only.
 */

/** @typedef {{ email: string, isAdmin: boolean, csrfToken?: string }} Me */
/** @typedef {{ email: string, isAdmin: boolean, csrfToken: string, expiresAt: string }} Session */
/** @typedef {{ signedIn: boolean, email?: string, isAdmin?: boolean, csrfToken?: string }} SessionState */
/** @typedef {'owner' | 'member'} Role */
/** @typedef {'free' | 'pro' | 'enterprise'} PlanName */
/** @typedef {{ id: number, name: string, plan: PlanName, role: Role | null }} Team */
/** @typedef {{ userId: number, email: string, name: string | null, role: Role, since: string }} Member */
/**
 * @typedef {{ id: number, teamId: number, email: string, role: Role, createdAt: string,
 *   expiresAt: string, status: 'pending' | 'accepted' | 'revoked' | 'expired' }} Invitation
 */
/** @typedef {Invitation & { token?: string, url?: string, mailed: boolean }} CreatedInvitation */
/**
 * @typedef {{ teamId: number, teamName: string, email: string, role: Role, expiresAt: string,
 *   invitedBy: { name: string | null, email: string } | null }} InvitationDetails
 */
/** @typedef {{ email: string, sessionsEnded: number, tokensRevoked: number }} PasswordResetDone */
/** @typedef {{ userId: number, email: string, token: string, url: string, expiresAt: string }} PasswordResetLink */
/**
 * @typedef {{ id: number, name: string, prefix: string, createdAt: string,
 *   lastUsedAt?: string | null, expiresAt: string | null, scope: 'full' | 'read' }} Token
 */
/** @typedef {Token & { token: string }} CreatedToken */
/**
 * @typedef {{ slug: string, name: string, teamId: number, plan: PlanName, defaultHost: string,
 *   originUrl: string, activeDeployId: number | null, primaryDomain: string | null }} Project
 */
/**
 * A change between two documents, as the change engine lists it (src/lib/openapi-diff).
 * @typedef {{ id: string, level: 'breaking' | 'warning' | 'info', operation?: string,
 *   location: string, message: string }} Change
 */
/**
 * @typedef {{ id: number, number: number, active: boolean, status: 'succeeded' | 'failed',
 *   problems: string[], sourceFormat: 'json' | 'yaml', originUrl: string, createdAt: string,
 *   createdBy: string | null, preview: boolean, changes: Change[], breaking: boolean }} Deploy
 */
/** @typedef {{ teamId: number, url: string, secretHint: string, createdAt: string, updatedAt: string }} WebhookEndpoint */
/** @typedef {{ endpoint: WebhookEndpoint, secret: string | null }} WebhookEndpointSet */
/**
 * @typedef {{ attempt: number, at: string, statusCode: number | null, durationMs: number,
 *   error: string | null, ok: boolean }} DeliveryAttempt
 */
/**
 * @typedef {{ id: string, type: string, state: 'pending' | 'delivered' | 'failed', attempts: number,
 *   nextAttemptAt: string | null, lastStatus: number | null, lastError: string | null,
 *   createdAt: string, deliveredAt: string | null, log: DeliveryAttempt[] }} WebhookDelivery
 */

/**
 * getProjectTraffic's answer (issue 27): totals, the series over time, and the groups asked for
 * (`by=operation`: operation, deprecated, sunset; `by=caller`: caller's label, kind, last seen).
 * `errors` counts statuses of 500 and above; latencies are in milliseconds, null without requests.
 * @typedef {{ at: string, requests: number, errors: number, p50: number | null, p95: number | null,
 *   p99: number | null }} TrafficPoint
 * @typedef {'key' | 'address' | 'other'} CallerKind
 * @typedef {{ key: string, requests: number, errors: number, p50: number | null, p95: number | null,
 *   p99: number | null, bytesIn: number, bytesOut: number, operation?: string, deprecated?: boolean,
 *   sunset?: string | null, caller?: string, callerKind?: CallerKind, lastSeenAt?: string }} TrafficGroup
 * @typedef {{ from: string, to: string, interval: 'minute' | 'hour',
 *   totals: { requests: number, errors: number, p50: number | null, p95: number | null, p99: number | null },
 *   series: TrafficPoint[], groups: TrafficGroup[] }} Traffic
 */
/**
 * One entry of the request log (listRequestLogs, streamRequestLogs): no bodies, no header values,
 * the query string's names without their values, the caller by its display label.
 * @typedef {{ id: number, at: string, method: string, operation: string, path: string, status: number,
 *   latencyMs: number, bytesIn: number, bytesOut: number, caller: string | null,
 *   requestId: string | null }} RequestLog
 */
/**
 * getDeprecationReach's answer: each deprecated operation of the live deploy, its sunset, and the
 * callers that called it in the last 7 days.
 * @typedef {{ caller: string, callerKind: CallerKind, requests: number, lastSeenAt: string }} ReachCaller
 * @typedef {{ operations: { operation: string, sunset: string | null, callers: ReachCaller[] }[] }} DeprecationReach
 */

/** @typedef {{ message: string, email?: string }} Flash */

/**
 * What the shell passes to every page. `signedIn` records a new session and goes to `to` (or the
 * sign-in page's `next`); `reloadTeams` refreshes the header after a team change; `flash` is the
 * message the previous page left with `setFlash` (a password just set), shown once.
 * @typedef {{
 *   main: HTMLElement,
 *   me: Me | null,
 *   teams: Team[],
 *   navigate: (path: string, options?: { replace?: boolean }) => void,
 *   signedIn: (session: Session, to?: string) => Promise<void>,
 *   reloadTeams: () => Promise<void>,
 *   flash: Flash | null,
 *   setFlash: (message: Flash | null) => void,
 * }} ViewContext
 */

export {};
