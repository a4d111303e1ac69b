import {
  type AnyOperation,
  defineOperation,
  type Operation,
  type ParameterSpec,
  ref,
} from '../../lib/http-api/index.ts';
import type { PetstoreTrx } from '../store/context.ts';
import type { Page, PetstoreStore, VersionCheck, Versioned } from '../store/index.ts';
import {
  etagHeader,
  ifMatchCheck,
  ifMatchParam,
  ifNoneMatchParam,
  notModifiedResponse,
  sendChanged,
  sendTagged,
  type TaggedKind,
} from './etag.ts';
import {
  createdHeaders,
  DEFAULT_PAGE_SIZE,
  idempotencyKeyParam,
  idParam,
  linkHeader,
  type PetstoreDeps,
  pageParams,
  sendCreated,
  sendPage,
} from './shared.ts';

/**
 * The shapes most Petstore operations share — a tagged read, a change or delete guarded by
 * If-Match, a page of a list, a create that takes an Idempotency-Key — each built from what is
 * particular to one operation: its words, its body and one call into the store. The resource gives
 * the path, tag, scope and answer schema; the shape adds the parameters, headers and codes it implies.
 */

/**
 * What an operation says for itself. Its resource gives the path, the tag, the scope and the codes
 * its body may be refused with; its shape the codes its parameters imply (`<kind>_not_found` for an
 * id, `precondition_failed` for If-Match, `idempotency_key_reused` for Idempotency-Key), so `errors`
 * lists only the others.
 */
type Contract = Pick<Operation<PetstoreDeps>, 'operationId' | 'summary' | 'description' | 'extensions'> & {
  readonly errors?: readonly string[];
};

/**
 * A resource: where it is, its tag, who may read and who may change it (the scopes the document's
 * Authentication section names), the body it is written with, and how its id, ETags and If-Match
 * errors name it.
 */
export interface Resource {
  /** The list's path; one item is at `<collection>/{<param>}`. */
  readonly collection: string;
  /** The path parameter: `petId`. */
  readonly param: string;
  /** What the id identifies, for the parameter's description. */
  readonly what: string;
  readonly kind: TaggedKind;
  readonly tag: string;
  readonly reads: string;
  readonly writes: string;
  /** The component schema of one item. */
  readonly schema: string;
  /**
   * The body it is created or replaced with: the component schema, and the codes its content may
   * be refused with (listed after the operation's own `errors`).
   */
  readonly body: { readonly schema: string; readonly errors?: readonly string[] };
  /** One item and several in words, for the answers' descriptions: `['category', 'categories']`. */
  readonly nouns: readonly [one: string, many: string];
  /** How an If-Match error names it: `Pet 3`. */
  readonly named: (id: number) => string;
}

const PETS_ACCESS = { tag: 'Pets', reads: 'public', writes: 'pets:write' } as const;
const STORE_ACCESS = { tag: 'Store', reads: 'store', writes: 'store' } as const;

/**
 * A resource; unless `own` says otherwise, `what` is its kind, its nouns are the kind and the kind
 * with an s, and an If-Match error names it `Kind <id>`.
 */
const resource = (
  collection: string,
  param: string,
  kind: TaggedKind,
  schema: string,
  access: Pick<Resource, 'tag' | 'reads' | 'writes'>,
  own: Pick<Resource, 'body'> & Partial<Pick<Resource, 'what' | 'nouns' | 'named'>>,
): Resource => ({
  ...access,
  collection,
  param,
  kind,
  schema,
  what: kind,
  nouns: [kind, `${kind}s`],
  named: (id) => `${kind.charAt(0).toUpperCase()}${kind.slice(1)} ${id}`,
  ...own,
});

export const PET = resource('/pets', 'petId', 'pet', 'Pet', PETS_ACCESS, {
  body: { schema: 'NewPet', errors: ['unknown_category', 'pet_status_conflict'] },
});
export const CATEGORY = resource('/categories', 'categoryId', 'category', 'Category', PETS_ACCESS, {
  body: { schema: 'NewCategory', errors: ['category_name_taken'] },
  nouns: ['category', 'categories'],
});
export const ORDER = resource('/store/orders', 'orderId', 'order', 'Order', STORE_ACCESS, {
  body: { schema: 'NewOrder', errors: ['unknown_pet', 'insufficient_stock'] },
});
export const INVENTORY = resource('/store/inventory', 'petId', 'inventory', 'InventoryItem', STORE_ACCESS, {
  body: { schema: 'InventoryUpdate' },
  what: 'pet',
  nouns: ['inventory entry', 'inventory entries'],
  named: (id) => `The inventory of pet ${id}`,
});

/** The operation's place: the resource's list or one item of it, its tag and its scope. */
const at = (resource: Resource, item: boolean, access: 'reads' | 'writes') => ({
  path: item ? `${resource.collection}/{${resource.param}}` : resource.collection,
  tags: [resource.tag],
  access: resource[access],
});

/** The contract's codes with the ones the shape implies: the resource's not-found first, the others last. */
const codes = (contract: Contract, first: readonly string[], last: readonly string[] = []) => [
  ...first,
  ...(contract.errors ?? []),
  ...last,
];
const notFound = (resource: Resource) => [`${resource.kind}_not_found`];
const bodyErrors = (resource: Resource) => resource.body.errors ?? [];

const idOf = (resource: Resource, params: Readonly<Record<string, number>>) =>
  params[resource.param] as number;

/** The request body of a create or a change: `description` says what it is. */
const requestBody = (resource: Resource, description: string) => ({
  description,
  schema: ref(resource.body.schema),
});

/**
 * A read by id that answers the resource (`answer` describes it, `The <noun>` by default) with its
 * ETag, or 304 to an If-None-Match naming it.
 */
export function taggedRead<T>(
  resource: Resource,
  spec: Contract & {
    readonly answer?: string;
    readonly read: (store: PetstoreStore, id: number) => Promise<Versioned<T>>;
  },
): AnyOperation<PetstoreDeps> {
  const { answer = `The ${resource.nouns[0]}`, read, ...contract } = spec;
  return defineOperation<PetstoreDeps, Record<string, number>>({
    ...contract,
    ...at(resource, true, 'reads'),
    errors: codes(contract, notFound(resource)),
    method: 'GET',
    parameters: [idParam(resource.param, resource.what), ifNoneMatchParam],
    responses: {
      200: { description: answer, schema: ref(resource.schema), headers: etagHeader },
      304: notModifiedResponse,
    },
    async handler({ params, headers }, reply, { store }) {
      const id = idOf(resource, params);
      return sendTagged(reply, headers, resource.kind, id, await read(store, id));
    },
  });
}

/**
 * A PUT that replaces a resource with the body `body` describes (`The <noun> as it should be` by
 * default), under If-Match, and answers it (`The updated <noun>` unless `answer` says otherwise)
 * with its new ETag.
 */
export function taggedChange<B, T>(
  resource: Resource,
  spec: Contract & {
    readonly body?: string;
    readonly answer?: string;
    readonly change: (
      store: PetstoreStore,
      id: number,
      body: B,
      check?: VersionCheck,
    ) => Promise<Versioned<T>>;
  },
): AnyOperation<PetstoreDeps> {
  const {
    body: bodyDescription = `The ${resource.nouns[0]} as it should be`,
    answer = `The updated ${resource.nouns[0]}`,
    change,
    ...contract
  } = spec;
  return defineOperation<PetstoreDeps, Record<string, number>, unknown, B>({
    ...contract,
    ...at(resource, true, 'writes'),
    errors: codes(contract, notFound(resource), [...bodyErrors(resource), 'precondition_failed']),
    method: 'PUT',
    parameters: [idParam(resource.param, resource.what), ifMatchParam],
    requestBody: requestBody(resource, bodyDescription),
    responses: { 200: { description: answer, schema: ref(resource.schema), headers: etagHeader } },
    async handler({ params, body, headers }, reply, { store }) {
      const id = idOf(resource, params);
      const check = ifMatchCheck(headers, resource.kind, id, resource.named(id));
      return sendChanged(reply, resource.kind, id, await change(store, id, body, check));
    },
  });
}

/** A DELETE under If-Match, answered 204. */
export function taggedDelete(
  resource: Resource,
  spec: Contract & {
    readonly remove: (store: PetstoreStore, id: number, check?: VersionCheck) => Promise<void>;
  },
): AnyOperation<PetstoreDeps> {
  const { remove, ...contract } = spec;
  return defineOperation<PetstoreDeps, Record<string, number>>({
    ...contract,
    ...at(resource, true, 'writes'),
    errors: codes(contract, notFound(resource), ['precondition_failed']),
    method: 'DELETE',
    parameters: [idParam(resource.param, resource.what), ifMatchParam],
    responses: { 204: { description: `The ${resource.what} was deleted` } },
    async handler({ params, headers }, reply, { store }) {
      const id = idOf(resource, params);
      await remove(store, id, ifMatchCheck(headers, resource.kind, id, resource.named(id)));
      return reply.code(204).send();
    },
  });
}

/**
 * A GET of a list, a page at a time: its `filters` and the page's size and cursor in the query;
 * the items as the body (an array of the resource, or the named array schema `arraySchema`;
 * `answer` describes it, `A page of <nouns>` by default), the next page in `Link: rel="next"`.
 */
export function pagedList<Q extends { limit?: number; cursor?: string }, T>(
  resource: Resource,
  spec: Contract & {
    readonly answer?: string;
    readonly arraySchema?: string;
    readonly filters?: readonly ParameterSpec[];
    readonly list: (store: PetstoreStore, query: Q & { limit: number }) => Promise<Page<T>>;
  },
): AnyOperation<PetstoreDeps> {
  const { answer = `A page of ${resource.nouns[1]}`, arraySchema, filters = [], list, ...contract } = spec;
  const schema = arraySchema
    ? ref(arraySchema)
    : { type: 'array', items: { $ref: `#/components/schemas/${resource.schema}` } };
  return defineOperation<PetstoreDeps, unknown, Q>({
    ...contract,
    ...at(resource, false, 'reads'),
    errors: codes(contract, []),
    method: 'GET',
    parameters: [...filters, ...pageParams],
    responses: { 200: { description: answer, schema, headers: linkHeader } },
    async handler({ query }, reply, { store }) {
      const page = await list(store, { ...query, limit: query.limit ?? DEFAULT_PAGE_SIZE });
      return sendPage(reply, resource.collection, query as Record<string, unknown>, page);
    },
  });
}

/**
 * A POST that creates a resource from the body `body` describes (`The new <noun>` by default),
 * once per Idempotency-Key, and answers 201 with its Location.
 */
export function idempotentCreate<B, T extends { id: number }>(
  resource: Resource,
  spec: Contract & {
    readonly body?: string;
    readonly answer: string;
    readonly create: (store: PetstoreStore, body: B, trx?: PetstoreTrx) => Promise<T>;
  },
): AnyOperation<PetstoreDeps> {
  const { body: bodyDescription = `The new ${resource.nouns[0]}`, answer, create, ...contract } = spec;
  return defineOperation<PetstoreDeps, unknown, unknown, B>({
    ...contract,
    ...at(resource, false, 'writes'),
    errors: codes(contract, [], [...bodyErrors(resource), 'idempotency_key_reused']),
    method: 'POST',
    parameters: [idempotencyKeyParam],
    requestBody: requestBody(resource, bodyDescription),
    responses: {
      201: { description: answer, schema: ref(resource.schema), headers: createdHeaders },
    },
    handler: (request, reply, deps) =>
      sendCreated(
        request,
        reply,
        deps,
        contract.operationId,
        (trx) => create(deps.store, request.body, trx),
        (created) => `${resource.collection}/${created.id}`,
      ),
  });
}
