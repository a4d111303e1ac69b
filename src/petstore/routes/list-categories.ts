import { defineOperation } from '../../lib/http-api/index.ts';
import { DEFAULT_PAGE_SIZE, linkHeader, type PetstoreDeps, pageParams, sendPage } from './shared.ts';

export const listCategories = defineOperation<PetstoreDeps, unknown, { limit?: number; cursor?: string }>({
  operationId: 'listCategories',
  method: 'GET',
  path: '/categories',
  tags: ['Pets'],
  access: 'public',
  summary: 'List categories',
  description: 'Lists categories in id order, paginated like `GET /pets` (`Link: rel="next"`).',
  parameters: pageParams,
  responses: {
    200: {
      description: 'A page of categories',
      schema: { type: 'array', items: { $ref: '#/components/schemas/Category' } },
      headers: linkHeader,
    },
  },
  errors: [],
  async handler({ query }, reply, { store }) {
    const page = await store.listCategories(query.limit ?? DEFAULT_PAGE_SIZE, query.cursor);
    return sendPage(reply, '/categories', query, page);
  },
});
