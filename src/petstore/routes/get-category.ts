import { defineOperation, ref } from '../../lib/http-api/index.ts';
import { etagHeader, ifNoneMatchParam, notModifiedResponse, sendTagged } from './etag.ts';
import { idParam, type PetstoreDeps } from './shared.ts';

export const getCategory = defineOperation<PetstoreDeps, { categoryId: number }>({
  operationId: 'getCategory',
  method: 'GET',
  path: '/categories/{categoryId}',
  tags: ['Pets'],
  access: 'public',
  summary: 'Read a category',
  description: 'Reads one category.',
  parameters: [idParam('categoryId', 'category'), ifNoneMatchParam],
  responses: {
    200: { description: 'The category', schema: ref('Category'), headers: etagHeader },
    304: notModifiedResponse,
  },
  errors: ['category_not_found'],
  async handler({ params, headers }, reply, { store }) {
    const category = await store.readCategory(params.categoryId);
    return sendTagged(reply, headers, 'category', params.categoryId, category);
  },
});
