import { defineOperation } from '../../lib/http-api/index.ts';
import { MAX_ID } from '../schemas.ts';
import { DEFAULT_PAGE_SIZE, linkHeader, type PetstoreDeps, pageParams, sendPage } from './shared.ts';

interface Query {
  petId?: number;
  complete?: boolean;
  limit?: number;
  cursor?: string;
}

export const listOrders = defineOperation<PetstoreDeps, unknown, Query>({
  operationId: 'listOrders',
  method: 'GET',
  path: '/store/orders',
  tags: ['Store'],
  access: 'store',
  summary: 'List orders',
  description:
    "Lists every customer's orders, in id order, paginated like `GET /pets`. This is store staff's view of the business, so interactive testing is disabled in the API reference (`x-hideTryItPanel`): a console on a public page must not invite visitors to page through other people's orders.",
  extensions: { 'x-hideTryItPanel': true },
  parameters: [
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
    ...pageParams,
  ],
  responses: {
    200: {
      description: 'A page of orders',
      schema: { type: 'array', items: { $ref: '#/components/schemas/Order' } },
      headers: linkHeader,
    },
  },
  errors: [],
  async handler({ query }, reply, { store }) {
    const page = await store.listOrders({ ...query, limit: query.limit ?? DEFAULT_PAGE_SIZE });
    return sendPage(reply, '/store/orders', query as Record<string, unknown>, page);
  },
});
