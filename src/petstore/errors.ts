import { serviceErrorCatalog } from '../lib/http-api/common-errors.ts';

/** Every code the Petstore API answers with. docs/errors.md lists them; a test keeps it in step. */
export const petstoreErrors = serviceErrorCatalog({
  400: {
    unsupported_version:
      'The API-Version request header asks for an interface version this server does not serve.',
  },
  401: {
    unauthenticated:
      'The operation needs an API key and none was sent, or the key is not valid (revoked or mistyped). WWW-Authenticate says which.',
  },
  403: {
    forbidden: "The API key lacks the scope the operation needs (the document's `security`).",
  },
  404: {
    key_not_found: 'No API key has this id.',
    pet_not_found: 'No pet has this id (it never existed or was deleted).',
    category_not_found: 'No category has this id.',
    order_not_found: 'No order has this id (it never existed or was cancelled).',
    inventory_not_found: 'No pet has this id, so it has no inventory entry.',
    webhook_subscription_not_found: 'No webhook subscription has this id.',
    delivery_not_found:
      'The webhook subscription has no message with this id (messages belong to one subscription).',
  },
  409: {
    category_name_taken: 'Another category already has this name (names are unique regardless of case).',
    category_in_use: 'Pets still belong to the category, so it cannot be deleted.',
    pet_has_orders:
      'The pet has orders (open or complete), so it cannot be deleted; set its stock to 0 instead.',
    pet_status_conflict:
      'The requested status contradicts the state table: status follows stock and open orders.',
    insufficient_stock: 'The order asks for more units than the stock holds.',
    order_already_complete: 'The order is complete, so it can be neither completed again nor cancelled.',
  },
  410: {
    operation_sunset: 'The operation reached its sunset date and is gone; the message names its successor.',
  },
  412: {
    precondition_failed:
      'If-Match names a version (ETag) the resource no longer has: someone changed it since you read it.',
  },
  422: {
    idempotency_key_reused: 'The Idempotency-Key was already used with a different request body.',
    unknown_category: 'The body names a categoryId that does not exist.',
    unknown_pet: 'The body names a petId that does not exist.',
    invalid_webhook_url:
      'The webhook URL is not absolute https:// (http:// only to loopback), carries credentials or a fragment, or points where this server does not deliver (PETSTORE_WEBHOOK_TARGETS).',
  },
  429: {
    rate_limited:
      'The key (or, without a key, the client address) sent more requests than its rate limit allows; Retry-After says when to try again.',
  },
  503: {
    request_timeout:
      'The request took longer than the documented time limit; it may or may not have taken effect.',
    webhooks_unavailable:
      'This server was started without a key to seal webhook signing secrets, so it keeps no subscriptions.',
  },
});

export type PetstoreErrorCode = keyof typeof petstoreErrors.specs;
