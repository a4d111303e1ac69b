import { defineOperation, ref } from '../../lib/http-api/index.ts';
import { etagHeader, etagOf } from './etag.ts';
import { idParam, type PetstoreDeps } from './shared.ts';

export const getOrder = defineOperation<PetstoreDeps, { orderId: number }>({
  operationId: 'getOrder',
  method: 'GET',
  path: '/store/orders/{orderId}',
  tags: ['Store'],
  access: 'store',
  summary: 'Read an order',
  description: 'Reads one order. A cancelled order no longer exists (404).',
  parameters: [idParam('orderId', 'order')],
  responses: { 200: { description: 'The order', schema: ref('Order'), headers: etagHeader } },
  errors: ['order_not_found'],
  async handler({ params }, reply, { store }) {
    const order = await store.readOrder(params.orderId);
    reply.header('etag', etagOf(order));
    return order;
  },
});
