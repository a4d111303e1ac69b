import { defineOperation, ref } from '../../lib/http-api/index.ts';
import type { NewOrder } from '../store/index.ts';
import { createdHeaders, idempotencyKeyParam, type PetstoreDeps, sendCreated } from './shared.ts';

export const placeOrder = defineOperation<PetstoreDeps, unknown, unknown, NewOrder>({
  operationId: 'placeOrder',
  method: 'POST',
  path: '/store/orders',
  tags: ['Store'],
  access: 'store',
  summary: 'Place an order',
  description:
    'Places an order for a pet. In one transaction its units leave the stock and are held for the order, so two orders can never take the same unit: an order for more than the stock is refused with 409 `insufficient_stock`. When the last units are taken the pet becomes `pending`.',
  parameters: [idempotencyKeyParam],
  requestBody: { description: 'The order', schema: ref('NewOrder') },
  responses: { 201: { description: 'The order was placed', schema: ref('Order'), headers: createdHeaders } },
  errors: ['unknown_pet', 'insufficient_stock', 'idempotency_key_reused'],
  handler: (request, reply, deps) =>
    sendCreated(
      request,
      reply,
      deps,
      'placeOrder',
      (trx) => deps.store.placeOrder(request.body, trx),
      (order) => `/store/orders/${order.id}`,
    ),
});
