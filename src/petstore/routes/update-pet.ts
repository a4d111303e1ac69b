import { defineOperation, ref } from '../../lib/http-api/index.ts';
import type { NewPet } from '../store/index.ts';
import { etagHeader, ifMatchCheck, ifMatchParam, sendChanged } from './etag.ts';
import { idParam, type PetstoreDeps } from './shared.ts';

export const updatePet = defineOperation<PetstoreDeps, { petId: number }, unknown, NewPet>({
  operationId: 'updatePet',
  method: 'PUT',
  path: '/pets/{petId}',
  tags: ['Pets'],
  access: 'pets:write',
  summary: 'Update a pet',
  description:
    "Replaces a pet's name and category. `status` may be sent but must equal the pet's current status: status follows stock and open orders, so change stock with `PUT /store/inventory/{petId}` instead.",
  parameters: [idParam('petId', 'pet'), ifMatchParam],
  requestBody: { description: 'The pet as it should be', schema: ref('NewPet') },
  responses: { 200: { description: 'The updated pet', schema: ref('Pet'), headers: etagHeader } },
  errors: ['pet_not_found', 'unknown_category', 'pet_status_conflict', 'precondition_failed'],
  async handler({ params, body, headers }, reply, { store }) {
    const check = ifMatchCheck(headers, 'pet', params.petId, `Pet ${params.petId}`);
    return sendChanged(reply, 'pet', params.petId, await store.updatePet(params.petId, body, check));
  },
});
