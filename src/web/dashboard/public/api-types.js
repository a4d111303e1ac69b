// @ts-check
/**
 * The management API's resources as the dashboard pages that carry @ts-check read them (the
 * schemas are in src/platform/api/schemas.ts), and what the router hands every view. Types only:
 * nothing imports this file at run time.
 */

/** @typedef {'free' | 'pro' | 'enterprise'} PlanName */
/** @typedef {{ id: number, name: string, plan: PlanName, role: 'owner' | 'member' | null }} Team */
/** @typedef {{ userId: number, email: string, name: string | null, role: 'owner' | 'member', since: string }} TeamMember */
/** @typedef {{ email: string, isAdmin: boolean }} Me */
/**
 * @typedef {{ slug: string, name: string, teamId: number, originUrl: string, plan: PlanName,
 *   defaultHost: string, activeDeployId: number | null, primaryDomain: string | null }} Project
 */
/**
 * @typedef {{ id: number, status: 'succeeded' | 'failed', originUrl: string,
 *   sourceFormat: 'json' | 'yaml', problems: string[], active: boolean, createdAt: string }} Deploy
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
 * What the router (app.js) passes to a view. A view may return a cleanup, run before the next one.
 * @typedef {{ main: HTMLElement, me: Me, teams: Team[],
 *   navigate: (path: string, options?: { replace?: boolean }) => void }} ViewContext
 */

export {};
