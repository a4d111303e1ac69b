import { defineOperation, ref } from '../../lib/http-api/index.ts';
import { etagHeader, ifNoneMatchParam, notModifiedResponse, sendTagged } from './etag.ts';
import { idParam, type PetstoreDeps } from './shared.ts';

export const getInventory = defineOperation<PetstoreDeps, { petId: number }>({
  operationId: 'getInventory',
  method: 'GET',
  path: '/store/inventory/{petId}',
  tags: ['Store'],
  access: 'store',
  summary: "Read a pet's stock",
  description: 'Reads the stock of one pet: the units that can still be ordered, and its status.',
  parameters: [idParam('petId', 'pet'), ifNoneMatchParam],
  responses: {
    200: { description: 'The inventory entry', schema: ref('InventoryItem'), headers: etagHeader },
    304: notModifiedResponse,
  },
  errors: ['inventory_not_found'],
  async handler({ params, headers }, reply, { store }) {
    const item = await store.readInventory(params.petId);
    return sendTagged(reply, headers, 'inventory', params.petId, item);
  },
});
