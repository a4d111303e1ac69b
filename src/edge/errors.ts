import { defineErrorCatalog } from '../lib/api-error.ts';

/** What the edge itself answers with, in the same `{ code, message, status }` shape. */
export const edgeErrors = defineErrorCatalog({
  host_not_found: {
    status: 404,
    meaning: 'No project is published at this hostname (unknown, unverified or removed).',
  },
  preview_private: {
    status: 401,
    meaning:
      "The host is a preview deploy's address (`<slug>--<id>.<platform domain>`), private to its team and to holders of a live share link: open it from the dashboard or through a share link. Answered alike whether or not the preview exists.",
  },
  page_not_found: {
    status: 404,
    meaning: 'The published site has no page at this path; the API is under /api/.',
  },
  origin_unreachable: {
    status: 502,
    meaning: "The project's origin refused the connection or failed mid-answer.",
  },
  origin_forbidden: {
    status: 502,
    meaning:
      "The project's origin is an address the platform does not connect to (loopback, private, link-local or metadata), and no platform admin granted the project's team that origin.",
  },
  origin_bad_response: {
    status: 502,
    meaning: "The project's origin sent a malformed answer (bad framing or headers).",
  },
  bad_request_framing: {
    status: 400,
    meaning:
      'The request is framed ambiguously (a second Host, a Host that differs from the HTTP/2 :authority, or a Transfer-Encoding other than chunked): the edge does not guess what the origin would read.',
  },
  cors_not_allowed: {
    status: 403,
    meaning:
      "A CORS preflight the project's policy refuses: its Origin, method or a request header is not allowed. The project's team sets the policy (the dashboard's Settings · CORS tab, the `cors:` section of `kennel domains apply`, or the API).",
  },
  bad_request_path: {
    status: 400,
    meaning:
      'The request path under /api/ has a `.` or `..` segment, raw or percent-encoded (`%2e%2e`): the edge does not forward a path that could climb out of the API.',
  },
  database_unavailable: {
    status: 503,
    meaning:
      'The platform lost its database connection for a moment (a restart or failover); retried requests succeed once it is back.',
  },
  operation_sunset: {
    status: 410,
    meaning:
      "The operation's sunset date, stated in the project's OpenAPI document, has passed; the edge answers for it without calling the origin. Sunset and Link (the successor) come with the answer.",
  },
  receive_timeout: {
    status: 408,
    meaning:
      'The request headers, or its body, did not arrive within the edge listener deadlines (HEADERS_TIMEOUT, RECEIVE_TIMEOUT); the connection is closed (over HTTP/2, the stream is reset).',
  },
  headers_too_large: { status: 431, meaning: 'The request line and headers are larger than 16 KB together.' },
  malformed_request: {
    status: 400,
    meaning:
      'The request is not valid HTTP/1.1 (framing, header syntax, a body cut short); the connection is closed.',
  },
  edge_error: { status: 500, meaning: 'The edge itself failed; it is logged with the request id.' },
  origin_timeout: { status: 504, meaning: "The project's origin did not answer in time." },
  node_starting: {
    status: 503,
    meaning:
      'The node is still starting (a first start creates the admin and the first project): every request but health checks and ACME http-01 answers gets this, with Retry-After, until it is ready.',
  },
  // The operator listener (METRICS_PORT):
  backup_method_not_allowed: { status: 405, meaning: 'A backup is written with POST /backup.' },
  backup_not_available: {
    status: 409,
    meaning: 'The node stores its data in PostgreSQL, which is backed up with pg_dump.',
  },
  backup_running: { status: 409, meaning: 'A backup is being written; one at a time.' },
  backup_failed: { status: 500, meaning: 'Writing the backup failed; the reason is logged.' },
});

export type EdgeErrorCode = keyof typeof edgeErrors.specs;
