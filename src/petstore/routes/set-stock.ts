import { defineOperation, ref } from '../../lib/http-api/index.ts';
import { etagHeader, ifMatchCheck, ifMatchParam, sendChanged } from './etag.ts';
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
  parameters: [idParam('petId', 'pet'), ifMatchParam],
  requestBody: { description: 'The new stock count', schema: ref('InventoryUpdate') },
  responses: {
    200: {
      description: 'The inventory entry after the change',
      schema: ref('InventoryItem'),
      headers: etagHeader,
    },
  },
  errors: ['inventory_not_found', 'precondition_failed'],
  async handler({ params, body, headers }, reply, { store }) {
    const check = ifMatchCheck(headers, 'inventory', params.petId, `The inventory of pet ${params.petId}`);
    const item = await store.setStock(params.petId, body.quantity, check);
    return sendChanged(reply, 'inventory', params.petId, item);
  },
});
