import { PET, taggedDelete } from './route-shapes.ts';

export const deletePet = taggedDelete(PET, {
  operationId: 'deletePet',
  summary: 'Delete a pet',
  description:
    "Deletes a pet and its inventory entry. A pet that any order names (open or complete) stays, for the orders' history: set its stock to 0 to stop sales.",
  errors: ['pet_has_orders'],
  remove: (store, id, check) => store.deletePet(id, check),
});
