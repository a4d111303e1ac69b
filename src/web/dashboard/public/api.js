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
 * Sends a request with the dashboard's session cookie, uncached, and reads the answer as text.
 * Throws ApiError (`network_error`, with `unreachable` as its message) when the platform cannot be
 * reached.
 * @param {string} path
 * @param {RequestInit} init
 * @param {string} unreachable
 * @returns {Promise<{ ok: boolean, status: number, text: string }>}
 */
export async function send(path, init, unreachable) {
  let response;
  try {
    response = await fetch(path, { ...init, credentials: 'same-origin', cache: 'no-store' });
  } catch {
    throw new ApiError(0, { code: 'network_error', message: unreachable });
  }
  return { ok: response.ok, status: response.status, text: await response.text() };
}

/**
 * A body parsed as JSON, or null when it is empty or no JSON.
 * @param {string} text
 */
export function parseJson(text) {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
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
  const answer = await send(
    path,
    { method, headers, body: body === undefined ? undefined : JSON.stringify(body) },
    'The platform could not be reached. Check your connection; the page retries on its own.',
  );
  const parsed = parseJson(answer.text);
  if (!answer.ok) {
    if (answer.status === 401) window.dispatchEvent(new CustomEvent('kennel:signed-out'));
    throw new ApiError(answer.status, parsed);
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
