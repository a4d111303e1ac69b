import { defineOperation } from '../../lib/http-api/index.ts';
import { idParam, type PetstoreDeps } from './shared.ts';

export const cancelOrder = defineOperation<PetstoreDeps, { orderId: number }>({
  operationId: 'cancelOrder',
  method: 'DELETE',
  path: '/store/orders/{orderId}',
  tags: ['Store'],
  access: 'store',
  summary: 'Cancel an order',
  description:
    'Cancels an open order: it is deleted and its units return to the stock (the pet becomes `available` again). A complete order cannot be cancelled (409 `order_already_complete`).',
  parameters: [idParam('orderId', 'order')],
  responses: { 204: { description: 'The order was cancelled' } },
  errors: ['order_not_found', 'order_already_complete'],
  async handler({ params }, reply, { store }) {
    await store.cancelOrder(params.orderId);
    return reply.code(204).send();
  },
});
