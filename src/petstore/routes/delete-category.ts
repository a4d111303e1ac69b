import { CATEGORY, taggedDelete } from './route-shapes.ts';

export const deleteCategory = taggedDelete(CATEGORY, {
  operationId: 'deleteCategory',
  summary: 'Delete a category',
  description:
    'Deletes a category that no pet belongs to; while pets still use it the answer is 409 `category_in_use`.',
  errors: ['category_in_use'],
  remove: (store, id, check) => store.deleteCategory(id, check),
});
