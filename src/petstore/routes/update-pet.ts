import type { NewPet } from '../store/index.ts';
import { PET, taggedChange } from './route-shapes.ts';

export const updatePet = taggedChange(PET, {
  operationId: 'updatePet',
  summary: 'Update a pet',
  description:
    "Replaces a pet's name and category. `status` may be sent but must equal the pet's current status: status follows stock and open orders, so change stock with `PUT /store/inventory/{petId}` instead.",
  change: (store, id, body: NewPet, check) => store.updatePet(id, body, check),
});
