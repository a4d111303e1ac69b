import { isForeignKeyViolation, isUniqueViolation, transact } from '../../storage/index.ts';
import { petstoreErrors } from '../errors.ts';
import { emitEvents } from '../events/emit-event.ts';
import type { PetstoreTrx, StoreContext } from './context.ts';
import { type Page, readPage } from './pages.ts';
import { type Category, toCategory, type VersionCheck, type Versioned } from './resources.ts';

export interface NewCategory {
  name: string;
  description?: string;
}

const notFound = (id: number) =>
  petstoreErrors.error(
    'category_not_found',
    `No category has id ${id}. List categories with GET /categories.`,
  );

const nameTaken = (name: string) =>
  petstoreErrors.error(
    'category_name_taken',
    `A category named "${name}" already exists (names are unique regardless of case). Use it, or pick another name.`,
  );

/** Names compare without case and surrounding spaces: "Dogs" and " dogs" are one category. */
const nameKey = (name: string) => name.trim().toLowerCase();

export async function createCategory(ctx: StoreContext, input: NewCategory): Promise<Category> {
  try {
    return await transact(ctx.db, async (trx) => {
      const row = await trx
        .insertInto('categories')
        .values({ name: input.name, name_key: nameKey(input.name), description: input.description ?? null })
        .returning(['id', 'name', 'description'])
        .executeTakeFirstOrThrow();
      const category = toCategory(row);
      await emitEvents(ctx, trx, [
        { type: 'category.created', subject: `category:${category.id}`, data: { ...category } },
      ]);
      return category;
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(input.name);
    throw error;
  }
}

export async function readCategory(ctx: StoreContext, id: number): Promise<Versioned<Category>> {
  const row = await ctx.db
    .selectFrom('categories')
    .select(['id', 'name', 'description', 'version'])
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw notFound(id);
  return { resource: toCategory(row), version: row.version };
}

export function listCategories(ctx: StoreContext, limit: number, cursor?: string): Promise<Page<Category>> {
  const query = ctx.db.selectFrom('categories').select(['id', 'name', 'description']);
  return readPage(query, 'id', (r) => r.id, { limit, cursor }, toCategory);
}

export async function updateCategory(
  ctx: StoreContext,
  id: number,
  input: NewCategory,
  check?: VersionCheck,
): Promise<Versioned<Category>> {
  try {
    return await transact(ctx.db, async (trx) => {
      if (check) await checkCategory(ctx, trx, id, check);
      const row = await trx
        .updateTable('categories')
        .set((eb) => ({
          name: input.name,
          name_key: nameKey(input.name),
          description: input.description ?? null,
          version: eb('version', '+', 1),
        }))
        .where('id', '=', id)
        .returning(['id', 'name', 'description', 'version'])
        .executeTakeFirst();
      if (!row) throw notFound(id);
      const category = toCategory(row);
      await emitEvents(ctx, trx, [
        { type: 'category.updated', subject: `category:${id}`, data: { ...category } },
      ]);
      return { resource: category, version: row.version };
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(input.name);
    throw error;
  }
}

/** Reads (and, on PostgreSQL, locks) a category and runs an If-Match check on its version. */
async function checkCategory(
  ctx: StoreContext,
  trx: PetstoreTrx,
  id: number,
  check: VersionCheck,
): Promise<void> {
  let select = trx.selectFrom('categories').select('version').where('id', '=', id);
  if (ctx.dialect === 'postgres') select = select.forUpdate();
  const row = await select.executeTakeFirst();
  if (!row) throw notFound(id);
  check(row.version);
}

/** Deletes a category no pet belongs to. */
export async function deleteCategory(ctx: StoreContext, id: number, check?: VersionCheck): Promise<void> {
  const inUse = () =>
    petstoreErrors.error(
      'category_in_use',
      `Pets still belong to category ${id}. Move them with PUT /pets/{petId} or delete them first (GET /pets?categoryId=${id} lists them).`,
    );
  try {
    await transact(ctx.db, async (trx) => {
      if (check) await checkCategory(ctx, trx, id, check);
      const pet = await trx
        .selectFrom('pets')
        .select('id')
        .where('category_id', '=', id)
        .limit(1)
        .executeTakeFirst();
      if (pet) throw inUse();
      const row = await trx
        .deleteFrom('categories')
        .where('id', '=', id)
        .returning(['id', 'name', 'description'])
        .executeTakeFirst();
      if (!row) throw notFound(id);
      await emitEvents(ctx, trx, [
        { type: 'category.deleted', subject: `category:${id}`, data: { ...toCategory(row) } },
      ]);
    });
  } catch (error) {
    // A pet created between the check and the delete: the foreign key refuses the delete.
    if (isForeignKeyViolation(error)) throw inUse();
    throw error;
  }
}
