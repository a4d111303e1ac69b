// @ts-check
/**
 * The management API's answers as the dashboard reads them: the types generated from its OpenAPI
 * document (src/platform/api-types.ts, `npm run generate:api-types`, through ./api-types.d.ts),
 * under the names the pages use; and what the shell hands each page. Types only.
 */

/** @typedef {import('./api-types.js').Me} Me */
/** @typedef {import('./api-types.js').Session} Session */
/** @typedef {import('./api-types.js').SessionState} SessionState */
/** @typedef {import('./api-types.js').Team} Team */
/** @typedef {import('./api-types.js').TeamMember} Member */
/** @typedef {Member['role']} Role */
/** @typedef {Team['plan']} PlanName */
/** @typedef {import('./api-types.js').Invitation} Invitation */
/** @typedef {import('./api-types.js').CreatedInvitation} CreatedInvitation */
/** @typedef {import('./api-types.js').InvitationDetails} InvitationDetails */
/** @typedef {import('./api-types.js').PasswordResetDone} PasswordResetDone */
/** @typedef {import('./api-types.js').PasswordResetLink} PasswordResetLink */
/** @typedef {import('./api-types.js').Token} Token */
/** @typedef {import('./api-types.js').CreatedToken} CreatedToken */
/** @typedef {import('./api-types.js').Project} Project */
/** @typedef {import('./api-types.js').Change} Change */
/** @typedef {import('./api-types.js').Deploy} Deploy */
/** @typedef {import('./api-types.js').WebhookEndpoint} WebhookEndpoint */
/** @typedef {import('./api-types.js').WebhookEndpointSet} WebhookEndpointSet */
/** @typedef {import('./api-types.js').WebhookDelivery} WebhookDelivery */
/** @typedef {WebhookDelivery['log'][number]} DeliveryAttempt */
/** @typedef {import('./api-types.js').TrafficPoint} TrafficPoint */
/** @typedef {import('./api-types.js').TrafficGroup} TrafficGroup */
/** getProjectTraffic's answer. @typedef {import('./api-types.js').ProjectTraffic} Traffic */
/** @typedef {import('./api-types.js').RequestLog} RequestLog */
/** @typedef {import('./api-types.js').DeprecationReach} DeprecationReach */
/** @typedef {DeprecationReach['operations'][number]['callers'][number]} ReachCaller */
/**
 * What identifies a caller: `key`, `address`, or `other` for the callers past the cap counted
 * together (text in the schema).
 * @typedef {NonNullable<TrafficGroup['callerKind']>} CallerKind
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
