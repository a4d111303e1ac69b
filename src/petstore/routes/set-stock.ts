import { INVENTORY, taggedChange } from './route-shapes.ts';

export const setStock = taggedChange(INVENTORY, {
  operationId: 'setStock',
  summary: "Set a pet's stock",
  description:
    'Sets the units that can be ordered. Units held by open orders are counted apart and stay held. The status follows: above zero the pet is `available`; at zero it is `pending` while orders are open, otherwise `sold`.',
  body: 'The new stock count',
  answer: 'The inventory entry after the change',
  change: (store, id, body: { quantity: number }, check) => store.setStock(id, body.quantity, check),
});
