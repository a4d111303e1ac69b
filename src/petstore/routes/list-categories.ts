import { CATEGORY, pagedList } from './route-shapes.ts';

export const listCategories = pagedList(CATEGORY, {
  operationId: 'listCategories',
  summary: 'List categories',
  description: 'Lists categories in id order, paginated like `GET /pets` (`Link: rel="next"`).',
  list: (store, query) => store.listCategories(query.limit, query.cursor),
});
