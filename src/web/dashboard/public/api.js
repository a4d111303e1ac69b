// @ts-check
/** The management API, with the dashboard's session cookie and the session's CSRF token. */

/** @type {string | null} */
let csrfToken = null;

/** The management API's Error body, as far as the dashboard reads it. */
/** @typedef {{ code?: string, message?: string, status?: number }} ErrorBody */

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {ErrorBody | null | undefined} body
   */
  constructor(status, body) {
    super(body?.message ?? `The platform answered ${status}.`);
    this.name = 'ApiError';
    this.status = status;
    this.code = body?.code ?? 'http_error';
    /** The whole Error body: some codes carry more (breaking_changes lists the `changes`). */
    this.body = body ?? null;
  }
}

/** @param {string | null | undefined} token */
export function setCsrfToken(token) {
  csrfToken = token ?? null;
}

/**
 * Calls the management API. Answers the parsed JSON body (null for 204); throws ApiError with the
 * Error body's code and message otherwise, and announces a lost session (401) to the shell.
 * @param {'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<any>}
 */
export async function api(method, path, body) {
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, {
      code: 'network_error',
      message: 'The platform could not be reached. Check your connection; the page retries on its own.',
    });
  }
  if (response.status === 204) return null;
  const text = await response.text();
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!response.ok) {
    const error = new ApiError(response.status, parsed);
    if (response.status === 401) window.dispatchEvent(new CustomEvent('kennel:signed-out'));
    throw error;
  }
  return parsed;
}

/** @param {string} slug */
export const slugPath = (slug) => `/api/v1/projects/${encodeURIComponent(slug)}`;
/**
 * @param {string} slug
 * @param {string} hostname
 */
export const domainPath = (slug, hostname) => `${slugPath(slug)}/domains/${encodeURIComponent(hostname)}`;
