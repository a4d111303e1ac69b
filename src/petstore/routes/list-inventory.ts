import { defineOperation } from '../../lib/http-api/index.ts';
import { DEFAULT_PAGE_SIZE, linkHeader, type PetstoreDeps, pageParams, sendPage } from './shared.ts';

export const listInventory = defineOperation<PetstoreDeps, unknown, { limit?: number; cursor?: string }>({
  operationId: 'listInventory',
  method: 'GET',
  path: '/store/inventory',
  tags: ['Store'],
  access: 'store',
  summary: 'List inventory',
  description: 'Lists the stock of every pet in pet id order, paginated like `GET /pets`.',
  parameters: pageParams,
  responses: {
    200: {
      description: 'A page of inventory entries',
      schema: { type: 'array', items: { $ref: '#/components/schemas/InventoryItem' } },
      headers: linkHeader,
    },
  },
  errors: [],
  async handler({ query }, reply, { store }) {
    const page = await store.listInventory(query.limit ?? DEFAULT_PAGE_SIZE, query.cursor);
    return sendPage(reply, '/store/inventory', query, page);
  },
});
