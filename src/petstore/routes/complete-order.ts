import { defineOperation, ref } from '../../lib/http-api/index.ts';
import { idParam, type PetstoreDeps } from './shared.ts';

export const completeOrder = defineOperation<PetstoreDeps, { orderId: number }>({
  operationId: 'completeOrder',
  method: 'POST',
  path: '/store/orders/{orderId}/complete',
  tags: ['Store'],
  access: 'store',
  summary: 'Complete an order',
  description:
    'Marks an open order fulfilled: `complete` becomes true and `shipDate` the time of completion. Its units leave the store for good; when they were the last ones and no other order is open, the pet becomes `sold`. A complete order answers 409 `order_already_complete`.',
  parameters: [idParam('orderId', 'order')],
  responses: { 200: { description: 'The completed order', schema: ref('Order') } },
  errors: ['order_not_found', 'order_already_complete'],
  handler: ({ params }, _reply, { store }) => store.completeOrder(params.orderId),
});
