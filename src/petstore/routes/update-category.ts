import { defineOperation, ref } from '../../lib/http-api/index.ts';
import type { NewCategory } from '../store/index.ts';
import { etagHeader, ifMatchCheck, ifMatchParam, sendChanged } from './etag.ts';
import { idParam, type PetstoreDeps } from './shared.ts';

export const updateCategory = defineOperation<PetstoreDeps, { categoryId: number }, unknown, NewCategory>({
  operationId: 'updateCategory',
  method: 'PUT',
  path: '/categories/{categoryId}',
  tags: ['Pets'],
  access: 'pets:write',
  summary: 'Update a category',
  description: "Replaces a category's name and description (a description left out is removed).",
  parameters: [idParam('categoryId', 'category'), ifMatchParam],
  requestBody: { description: 'The category as it should be', schema: ref('NewCategory') },
  responses: { 200: { description: 'The updated category', schema: ref('Category'), headers: etagHeader } },
  errors: ['category_not_found', 'category_name_taken', 'precondition_failed'],
  async handler({ params, body, headers }, reply, { store }) {
    const check = ifMatchCheck(headers, 'category', params.categoryId, `Category ${params.categoryId}`);
    const category = await store.updateCategory(params.categoryId, body, check);
    return sendChanged(reply, 'category', params.categoryId, category);
  },
});
