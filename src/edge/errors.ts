import { defineErrorCatalog } from '../lib/api-error.ts';

/** What the edge itself answers with, in the same `{ code, message, status }` shape. */
export const edgeErrors = defineErrorCatalog({
  host_not_found: {
    status: 404,
    meaning: 'No project is published at this hostname (unknown, unverified or removed).',
  },
  page_not_found: {
    status: 404,
    meaning: 'The published site has no page at this path; the API is under /api/.',
  },
  origin_unreachable: {
    status: 502,
    meaning: "The project's origin refused the connection or failed mid-answer.",
  },
  edge_error: { status: 500, meaning: 'The edge itself failed; it is logged with the request id.' },
  origin_timeout: { status: 504, meaning: "The project's origin did not answer in time." },
});

export type EdgeErrorCode = keyof typeof edgeErrors.specs;
