import { defineOperation, ref } from '../../lib/http-api/index.ts';
import { idParam, type PetstoreDeps } from './shared.ts';

export const setStock = defineOperation<PetstoreDeps, { petId: number }, unknown, { quantity: number }>({
  operationId: 'setStock',
  method: 'PUT',
  path: '/store/inventory/{petId}',
  tags: ['Store'],
  access: 'store',
  summary: "Set a pet's stock",
  description:
    'Sets the units that can be ordered. Units held by open orders are counted apart and stay held. The status follows: above zero the pet is `available`; at zero it is `pending` while orders are open, otherwise `sold`.',
  parameters: [idParam('petId', 'pet')],
  requestBody: { description: 'The new stock count', schema: ref('InventoryUpdate') },
  responses: { 200: { description: 'The inventory entry after the change', schema: ref('InventoryItem') } },
  errors: ['inventory_not_found'],
  handler: ({ params, body }, _reply, { store }) => store.setStock(params.petId, body.quantity),
});
