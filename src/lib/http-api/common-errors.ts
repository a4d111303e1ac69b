import type { ErrorSpec } from '../api-error.ts';

/**
 * Codes every Kennel HTTP interface answers with, whatever the operation. Each service's catalog
 * spreads these and adds its own.
 */
export const commonErrors = {
  bad_request: {
    status: 400,
    meaning: 'The request could not be read (for example a wrong Content-Length).',
  },
  malformed_json: {
    status: 400,
    meaning: 'The body is not valid JSON, or is empty while Content-Type says JSON.',
  },
  validation_failed: {
    status: 400,
    meaning:
      'A path parameter, query parameter or body field does not match the schema: wrong type, unknown field, value out of range or not in the enumeration.',
  },
  route_not_found: { status: 404, meaning: 'No operation has this path.' },
  method_not_allowed: {
    status: 405,
    meaning: 'The path exists but not with this method; the Allow header lists the methods it has.',
  },
  body_too_large: { status: 413, meaning: 'The body is larger than the documented limit.' },
  unsupported_media_type: { status: 415, meaning: 'The body is not sent as application/json.' },
  internal_error: { status: 500, meaning: 'An unexpected failure; it is logged with the request id.' },
  database_unavailable: {
    status: 503,
    meaning:
      'The database could not be reached or the connection to it was lost during the request; Retry-After says when to try again. A change sent then may or may not have been saved: read it back before sending it again.',
  },
} as const satisfies Record<string, ErrorSpec>;

export type CommonErrorCode = keyof typeof commonErrors;

/** Which common codes an operation can return, from the inputs it takes. */
export function implicitErrorCodes(op: {
  parameters?: readonly unknown[];
  requestBody?: unknown;
}): CommonErrorCode[] {
  const codes: CommonErrorCode[] = [];
  if (op.requestBody) codes.push('bad_request', 'malformed_json', 'unsupported_media_type', 'body_too_large');
  if (op.requestBody || (op.parameters?.length ?? 0) > 0) codes.push('validation_failed');
  // Every operation reads or writes the database.
  codes.push('internal_error', 'database_unavailable');
  return codes;
}
