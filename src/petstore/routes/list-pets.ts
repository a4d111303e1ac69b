import { ref } from '../../lib/http-api/index.ts';
import { MAX_ID } from '../schemas.ts';
import type { PetStatus } from '../stock-rules.ts';
import { PET, pagedList } from './route-shapes.ts';

interface Query {
  status?: PetStatus;
  categoryId?: number;
  id?: number[];
  limit: number;
  cursor?: string;
}

export const listPets = pagedList(PET, {
  operationId: 'listPets',
  summary: 'List pets',
  description:
    'Lists pets in id order, optionally filtered by status, category or ids. Paginated: when more pets match, the `Link` header carries the next page (rel="next"); the body is always a `Pets` array. `?id=` is the successor of the deprecated `GET /pets/{petId}`: it reads one pet, or up to 100 in one call.',
  arraySchema: 'Pets',
  filters: [
    { name: 'status', in: 'query', description: 'Only pets with this status', schema: ref('PetStatus') },
    {
      name: 'categoryId',
      in: 'query',
      description: 'Only pets of this category',
      schema: { type: 'integer', format: 'int64', minimum: 1, maximum: MAX_ID },
    },
    {
      name: 'id',
      in: 'query',
      description: 'Only these pets (repeat the parameter for several: `?id=1&id=2`, at most 100)',
      explode: true,
      schema: {
        type: 'array',
        maxItems: 100,
        items: { type: 'integer', format: 'int64', minimum: 1, maximum: MAX_ID },
      },
    },
  ],
  list: (store, query: Query) => store.listPets({ ...query, ids: query.id }),
});
