import { defineOperation } from '../../lib/http-api/index.ts';
import { ifMatchCheck, ifMatchParam } from './etag.ts';
import { idParam, type PetstoreDeps } from './shared.ts';

export const deletePet = defineOperation<PetstoreDeps, { petId: number }>({
  operationId: 'deletePet',
  method: 'DELETE',
  path: '/pets/{petId}',
  tags: ['Pets'],
  access: 'pets:write',
  summary: 'Delete a pet',
  description:
    "Deletes a pet and its inventory entry. A pet that any order names (open or complete) stays, for the orders' history: set its stock to 0 to stop sales.",
  parameters: [idParam('petId', 'pet'), ifMatchParam],
  responses: { 204: { description: 'The pet was deleted' } },
  errors: ['pet_not_found', 'pet_has_orders', 'precondition_failed'],
  async handler({ params, headers }, reply, { store }) {
    await store.deletePet(params.petId, ifMatchCheck(headers, 'pet', params.petId, `Pet ${params.petId}`));
    return reply.code(204).send();
  },
});
