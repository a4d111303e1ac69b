import { CATEGORY, taggedRead } from './route-shapes.ts';

export const getCategory = taggedRead(CATEGORY, {
  operationId: 'getCategory',
  summary: 'Read a category',
  description: 'Reads one category.',
  read: (store, id) => store.readCategory(id),
});
