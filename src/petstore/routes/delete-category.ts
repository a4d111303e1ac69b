import { defineOperation } from '../../lib/http-api/index.ts';
import { ifMatchCheck, ifMatchParam } from './etag.ts';
import { idParam, type PetstoreDeps } from './shared.ts';

export const deleteCategory = defineOperation<PetstoreDeps, { categoryId: number }>({
  operationId: 'deleteCategory',
  method: 'DELETE',
  path: '/categories/{categoryId}',
  tags: ['Pets'],
  access: 'pets:write',
  summary: 'Delete a category',
  description:
    'Deletes a category that no pet belongs to; while pets still use it the answer is 409 `category_in_use`.',
  parameters: [idParam('categoryId', 'category'), ifMatchParam],
  responses: { 204: { description: 'The category was deleted' } },
  errors: ['category_not_found', 'category_in_use', 'precondition_failed'],
  async handler({ params, headers }, reply, { store }) {
    await store.deleteCategory(
      params.categoryId,
      ifMatchCheck(headers, 'category', params.categoryId, `Category ${params.categoryId}`),
    );
    return reply.code(204).send();
  },
});
