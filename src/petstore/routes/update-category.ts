import { defineOperation, ref } from '../../lib/http-api/index.ts';
import type { NewCategory } from '../store/index.ts';
import { idParam, type PetstoreDeps } from './shared.ts';

export const updateCategory = defineOperation<PetstoreDeps, { categoryId: number }, unknown, NewCategory>({
  operationId: 'updateCategory',
  method: 'PUT',
  path: '/categories/{categoryId}',
  tags: ['Pets'],
  access: 'pets:write',
  summary: 'Update a category',
  description: "Replaces a category's name and description (a description left out is removed).",
  parameters: [idParam('categoryId', 'category')],
  requestBody: { description: 'The category as it should be', schema: ref('NewCategory') },
  responses: { 200: { description: 'The updated category', schema: ref('Category') } },
  errors: ['category_not_found', 'category_name_taken'],
  handler: ({ params, body }, _reply, { store }) => store.updateCategory(params.categoryId, body),
});
