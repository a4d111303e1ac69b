import { INVENTORY, pagedList } from './route-shapes.ts';

export const listInventory = pagedList(INVENTORY, {
  operationId: 'listInventory',
  summary: 'List inventory',
  description: 'Lists the stock of every pet in pet id order, paginated like `GET /pets`.',
  list: (store, query) => store.listInventory(query.limit, query.cursor),
});
