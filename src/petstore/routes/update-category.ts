import type { NewCategory } from '../store/index.ts';
import { CATEGORY, taggedChange } from './route-shapes.ts';

export const updateCategory = taggedChange(CATEGORY, {
  operationId: 'updateCategory',
  summary: 'Update a category',
  description: "Replaces a category's name and description (a description left out is removed).",
  change: (store, id, body: NewCategory, check) => store.updateCategory(id, body, check),
});
