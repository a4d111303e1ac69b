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
  malformed_url: {
    status: 400,
    meaning: 'The URL holds a percent-escape that does not decode to UTF-8 text (such as `%E0%A4%A`).',
  },
  malformed_request: {
    status: 400,
    meaning:
      'The request is not valid HTTP/1.1 (broken chunked encoding, a body shorter than its Content-Length, invalid characters in a header); the connection is closed.',
  },
  route_not_found: { status: 404, meaning: 'No operation has this path.' },
  method_not_allowed: {
    status: 405,
    meaning: 'The path exists but not with this method; the Allow header lists the methods it has.',
  },
  receive_timeout: {
    status: 408,
    meaning:
      'The request headers or body did not arrive within the time limit (the body stalled, or is shorter than its Content-Length); the connection is closed.',
  },
  body_too_large: { status: 413, meaning: 'The body is larger than the documented limit.' },
  path_too_long: { status: 414, meaning: 'A path parameter is longer than 100 characters.' },
  unsupported_media_type: { status: 415, meaning: 'The body is not sent as application/json.' },
  invalid_character: {
    status: 422,
    meaning:
      'A text value (body field, query or path parameter) contains U+0000 (NUL), which no text field can hold.',
  },
  headers_too_large: {
    status: 431,
    meaning: 'The request line and headers together are larger than 16 KB; the connection is closed.',
  },
  internal_error: { status: 500, meaning: 'An unexpected failure; it is logged with the request id.' },
  database_unavailable: {
    status: 503,
    meaning:
      'The database could not be reached or the connection to it was lost during the request; Retry-After says when to try again. A change sent then may or may not have been saved: read it back before sending it again.',
  },
  shutting_down: {
    status: 503,
    meaning: 'The server is shutting down and takes no new requests; send the request again.',
  },
} as const satisfies Record<string, ErrorSpec>;

export type CommonErrorCode = keyof typeof commonErrors;

/** Which common codes an operation can return, from the inputs it takes. */
export function implicitErrorCodes(op: {
  parameters?: readonly { in: string; schema: Record<string, unknown> }[];
  requestBody?: unknown;
}): CommonErrorCode[] {
  const codes: CommonErrorCode[] = [];
  if (op.requestBody) codes.push('bad_request', 'malformed_json', 'unsupported_media_type', 'body_too_large');
  if (op.requestBody || (op.parameters?.length ?? 0) > 0) codes.push('validation_failed');
  if (op.requestBody || op.parameters?.some((p) => p.in !== 'header' && takesText(p.schema))) {
    codes.push('invalid_character');
  }
  // Every operation reads or writes the database.
  codes.push('internal_error', 'database_unavailable');
  return codes;
}

/** Whether a parameter's value may be text (a string, or a schema by reference). */
function takesText(schema: Record<string, unknown>): boolean {
  const item = schema.type === 'array' ? (schema.items as Record<string, unknown> | undefined) : schema;
  return item !== undefined && (item.type === 'string' || item.$ref !== undefined);
}
