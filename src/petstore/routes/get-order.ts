import { defineOperation, ref } from '../../lib/http-api/index.ts';
import { etagHeader, ifNoneMatchParam, notModifiedResponse, sendTagged } from './etag.ts';
import { idParam, type PetstoreDeps } from './shared.ts';

export const getOrder = defineOperation<PetstoreDeps, { orderId: number }>({
  operationId: 'getOrder',
  method: 'GET',
  path: '/store/orders/{orderId}',
  tags: ['Store'],
  access: 'store',
  summary: 'Read an order',
  description: 'Reads one order. A cancelled order no longer exists (404).',
  parameters: [idParam('orderId', 'order'), ifNoneMatchParam],
  responses: {
    200: { description: 'The order', schema: ref('Order'), headers: etagHeader },
    304: notModifiedResponse,
  },
  errors: ['order_not_found'],
  async handler({ params, headers }, reply, { store }) {
    const order = await store.readOrder(params.orderId);
    return sendTagged(reply, headers, 'order', params.orderId, order);
  },
});
