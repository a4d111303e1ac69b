import { ORDER, taggedRead } from './route-shapes.ts';

export const getOrder = taggedRead(ORDER, {
  operationId: 'getOrder',
  summary: 'Read an order',
  description: 'Reads one order. A cancelled order no longer exists (404).',
  read: (store, id) => store.readOrder(id),
});
