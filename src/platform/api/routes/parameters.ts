/** Path parameters and error lists the management API's routes share: each declared once. */

/** A path parameter holding a row id (1 or more). */
export const idParam = (name: string, description: string) => ({
  name,
  in: 'path' as const,
  description,
  schema: { type: 'integer', minimum: 1 },
});

export const slugParam = {
  name: 'slug',
  in: 'path' as const,
  description: 'Project slug',
  schema: { type: 'string', minLength: 1, maxLength: 63 },
};

export const teamIdParam = idParam('teamId', 'Team id');

/** Team owners only: a member is forbidden, another team's id is not found. */
export const teamOwnerErrors = ['unauthenticated', 'forbidden', 'team_not_found'];

/** A change by a team owner: the owner errors and a cookie session's missing CSRF token. */
export const teamOwnerChangeErrors = ['unauthenticated', 'csrf_failed', 'forbidden', 'team_not_found'];
