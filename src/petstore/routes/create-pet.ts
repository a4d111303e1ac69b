import type { NewPet } from '../store/index.ts';
import { idempotentCreate, PET } from './route-shapes.ts';

export const createPet = idempotentCreate(PET, {
  operationId: 'createPet',
  summary: 'Add a pet',
  description:
    'Adds a pet to the store with its inventory entry. `status` available (the default) lists one unit in stock, sold lists none; pending is refused, since only open orders make a pet pending. Raise the stock with `PUT /store/inventory/{petId}`.',
  answer: 'The pet was created',
  create: (store, body: NewPet, trx) => store.createPet(body, trx),
});
