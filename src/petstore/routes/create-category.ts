import { defineOperation, ref } from '../../lib/http-api/index.ts';
import type { NewCategory } from '../store/index.ts';
import { locationHeader, type PetstoreDeps } from './shared.ts';

export const createCategory = defineOperation<PetstoreDeps, unknown, unknown, NewCategory>({
  operationId: 'createCategory',
  method: 'POST',
  path: '/categories',
  tags: ['Pets'],
  access: 'pets:write',
  summary: 'Add a category',
  description: 'Adds a category. Names are unique regardless of case.',
  requestBody: { description: 'The new category', schema: ref('NewCategory') },
  responses: {
    201: { description: 'The category was created', schema: ref('Category'), headers: locationHeader },
  },
  errors: ['category_name_taken'],
  async handler({ body }, reply, { store }) {
    const category = await store.createCategory(body);
    reply.code(201).header('location', `/categories/${category.id}`);
    return category;
  },
});
