import { defineOperation, ref } from '../../lib/http-api/index.ts';
import type { NewPet } from '../store/index.ts';
import { createdHeaders, idempotencyKeyParam, type PetstoreDeps, sendCreated } from './shared.ts';

export const createPet = defineOperation<PetstoreDeps, unknown, unknown, NewPet>({
  operationId: 'createPet',
  method: 'POST',
  path: '/pets',
  tags: ['Pets'],
  access: 'pets:write',
  summary: 'Add a pet',
  description:
    'Adds a pet to the store with its inventory entry. `status` available (the default) lists one unit in stock, sold lists none; pending is refused, since only open orders make a pet pending. Raise the stock with `PUT /store/inventory/{petId}`.',
  parameters: [idempotencyKeyParam],
  requestBody: { description: 'The new pet', schema: ref('NewPet') },
  responses: { 201: { description: 'The pet was created', schema: ref('Pet'), headers: createdHeaders } },
  errors: ['unknown_category', 'pet_status_conflict', 'idempotency_key_reused'],
  handler: (request, reply, deps) =>
    sendCreated(
      request,
      reply,
      deps,
      'createPet',
      (trx) => deps.store.createPet(request.body, trx),
      (pet) => `/pets/${pet.id}`,
    ),
});
