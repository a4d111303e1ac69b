import { INVENTORY, taggedRead } from './route-shapes.ts';

export const getInventory = taggedRead(INVENTORY, {
  operationId: 'getInventory',
  summary: "Read a pet's stock",
  description: 'Reads the stock of one pet: the units that can still be ordered, and its status.',
  read: (store, id) => store.readInventory(id),
});
