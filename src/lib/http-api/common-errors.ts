import { defineErrorCatalog, type ErrorCatalog } from '../api-error.ts';
import { byStatus, type CodesOf, type MeaningsByStatus } from './error-catalog.ts';

/**
 * Codes every Kennel HTTP interface answers with, whatever the operation. Each service's catalog
 * (serviceErrorCatalog) has these and its own.
 */
export const commonErrors = byStatus({
  400: {
    bad_request: 'The request could not be read (for example a wrong Content-Length).',
    malformed_json: 'The body is not valid JSON, or is empty while Content-Type says JSON.',
    validation_failed:
      'A path parameter, query parameter or body field does not match the schema: wrong type, unknown field, value out of range or not in the enumeration.',
    malformed_url: 'The URL holds a percent-escape that does not decode to UTF-8 text (such as `%E0%A4%A`).',
    malformed_request:
      'The request is not valid HTTP/1.1 (broken chunked encoding, a body shorter than its Content-Length, invalid characters in a header); the connection is closed.',
  },
  404: { route_not_found: 'No operation has this path.' },
  405: {
    method_not_allowed:
      'The path exists but not with this method; the Allow header lists the methods it has.',
  },
  408: {
    receive_timeout:
      'The request headers or body did not arrive within the time limit (the body stalled, or is shorter than its Content-Length); the connection is closed.',
  },
  413: { body_too_large: 'The body is larger than the documented limit.' },
  414: { path_too_long: 'A path parameter is longer than 100 characters.' },
  415: { unsupported_media_type: 'The body is not sent as application/json.' },
  422: {
    invalid_character:
      'A text value (body field, query or path parameter) contains U+0000 (NUL), which no text field can hold.',
  },
  431: {
    headers_too_large:
      'The request line and headers together are larger than 16 KB; the connection is closed.',
  },
  500: { internal_error: 'An unexpected failure; it is logged with the request id.' },
  503: {
    database_unavailable:
      'The database could not be reached or the connection to it was lost during the request; Retry-After says when to try again. A change sent then may or may not have been saved: read it back before sending it again.',
    shutting_down: 'The server is shutting down and takes no new requests; send the request again.',
  },
});

export type CommonErrorCode = keyof typeof commonErrors;

/** A service's catalog: the common codes first, then its own, given by status. */
export function serviceErrorCatalog<Own extends MeaningsByStatus>(
  own: Own,
): ErrorCatalog<CommonErrorCode | CodesOf<Own>> {
  return defineErrorCatalog({ ...commonErrors, ...byStatus(own) });
}

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
