import type { NewOrder } from '../store/index.ts';
import { idempotentCreate, ORDER } from './route-shapes.ts';

export const placeOrder = idempotentCreate(ORDER, {
  operationId: 'placeOrder',
  summary: 'Place an order',
  description:
    'Places an order for a pet. In one transaction its units leave the stock and are held for the order, so two orders can never take the same unit: an order for more than the stock is refused with 409 `insufficient_stock`. When the last units are taken the pet becomes `pending`.',
  body: 'The order',
  answer: 'The order was placed',
  create: (store, body: NewOrder, trx) => store.placeOrder(body, trx),
});
