import { MAX_ID } from '../schemas.ts';
import { ORDER, pagedList } from './route-shapes.ts';

export const listOrders = pagedList(ORDER, {
  operationId: 'listOrders',
  summary: 'List orders',
  description:
    "Lists every customer's orders, in id order, paginated like `GET /pets`. This is store staff's view of the business, so interactive testing is disabled in the API reference (`x-hideTryItPanel`): a console on a public page must not invite visitors to page through other people's orders.",
  extensions: { 'x-hideTryItPanel': true },
  filters: [
    {
      name: 'petId',
      in: 'query',
      description: 'Only orders for this pet',
      schema: { type: 'integer', format: 'int64', minimum: 1, maximum: MAX_ID },
    },
    {
      name: 'complete',
      in: 'query',
      description: 'Only complete (true) or open (false) orders',
      schema: { type: 'boolean' },
    },
  ],
  list: (store, query: { petId?: number; complete?: boolean; limit: number; cursor?: string }) =>
    store.listOrders(query),
});
