import { defineOperation, ref } from '../../lib/http-api/index.ts';
import { MAX_ID } from '../schemas.ts';
import type { PetStatus } from '../stock-rules.ts';
import { DEFAULT_PAGE_SIZE, linkHeader, type PetstoreDeps, pageParams, sendPage } from './shared.ts';

interface Query {
  status?: PetStatus;
  categoryId?: number;
  id?: number[];
  limit?: number;
  cursor?: string;
}

export const listPets = defineOperation<PetstoreDeps, unknown, Query>({
  operationId: 'listPets',
  method: 'GET',
  path: '/pets',
  tags: ['Pets'],
  access: 'public',
  summary: 'List pets',
  description:
    'Lists pets in id order, optionally filtered by status, category or ids. Paginated: when more pets match, the `Link` header carries the next page (rel="next"); the body is always a `Pets` array. `?id=` is the successor of the deprecated `GET /pets/{petId}`: it reads one pet, or up to 100 in one call.',
  parameters: [
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
    ...pageParams,
  ],
  responses: { 200: { description: 'A page of pets', schema: ref('Pets'), headers: linkHeader } },
  errors: [],
  async handler({ query }, reply, { store }) {
    const page = await store.listPets({
      ...query,
      ids: query.id,
      limit: query.limit ?? DEFAULT_PAGE_SIZE,
    });
    return sendPage(reply, '/pets', query as Record<string, unknown>, page);
  },
});
