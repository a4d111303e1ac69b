import { defineErrorCatalog } from '../lib/api-error.ts';
import { commonErrors } from '../lib/http-api/index.ts';

/** Every code the Petstore API answers with. docs/errors.md lists them; a test keeps it in step. */
export const petstoreErrors = defineErrorCatalog({
  ...commonErrors,
  unauthenticated: {
    status: 401,
    meaning:
      'The operation needs an API key and none was sent, or the key is not valid (revoked or mistyped). WWW-Authenticate says which.',
  },
  forbidden: {
    status: 403,
    meaning: "The API key lacks the scope the operation needs (the document's `security`).",
  },
  rate_limited: {
    status: 429,
    meaning:
      'The key (or, without a key, the client address) sent more requests than its rate limit allows; Retry-After says when to try again.',
  },
  precondition_failed: {
    status: 412,
    meaning:
      'If-Match names a version (ETag) the resource no longer has: someone changed it since you read it.',
  },
  idempotency_key_reused: {
    status: 422,
    meaning: 'The Idempotency-Key was already used with a different request body.',
  },
  key_not_found: { status: 404, meaning: 'No API key has this id.' },
  unsupported_version: {
    status: 400,
    meaning: 'The API-Version request header asks for an interface version this server does not serve.',
  },
  request_timeout: {
    status: 503,
    meaning: 'The request took longer than the documented time limit; it may or may not have taken effect.',
  },
  pet_not_found: { status: 404, meaning: 'No pet has this id (it never existed or was deleted).' },
  category_not_found: { status: 404, meaning: 'No category has this id.' },
  order_not_found: { status: 404, meaning: 'No order has this id (it never existed or was cancelled).' },
  inventory_not_found: { status: 404, meaning: 'No pet has this id, so it has no inventory entry.' },
  operation_sunset: {
    status: 410,
    meaning: 'The operation reached its sunset date and is gone; the message names its successor.',
  },
  unknown_category: { status: 422, meaning: 'The body names a categoryId that does not exist.' },
  unknown_pet: { status: 422, meaning: 'The body names a petId that does not exist.' },
  category_name_taken: {
    status: 409,
    meaning: 'Another category already has this name (names are unique regardless of case).',
  },
  category_in_use: { status: 409, meaning: 'Pets still belong to the category, so it cannot be deleted.' },
  pet_has_orders: {
    status: 409,
    meaning: 'The pet has orders (open or complete), so it cannot be deleted; set its stock to 0 instead.',
  },
  pet_status_conflict: {
    status: 409,
    meaning: 'The requested status contradicts the state table: status follows stock and open orders.',
  },
  insufficient_stock: { status: 409, meaning: 'The order asks for more units than the stock holds.' },
  webhook_subscription_not_found: { status: 404, meaning: 'No webhook subscription has this id.' },
  delivery_not_found: {
    status: 404,
    meaning: 'The webhook subscription has no message with this id (messages belong to one subscription).',
  },
  invalid_webhook_url: {
    status: 422,
    meaning:
      'The webhook URL is not absolute https:// (http:// only to loopback), carries credentials or a fragment, or points where this server does not deliver (PETSTORE_WEBHOOK_TARGETS).',
  },
  webhooks_unavailable: {
    status: 503,
    meaning:
      'This server was started without a key to seal webhook signing secrets, so it keeps no subscriptions.',
  },
  order_already_complete: {
    status: 409,
    meaning: 'The order is complete, so it can be neither completed again nor cancelled.',
  },
});

export type PetstoreErrorCode = keyof typeof petstoreErrors.specs;
