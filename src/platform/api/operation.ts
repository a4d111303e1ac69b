import {
  type AnyOperation,
  type HttpMethod,
  type Operation,
  type ParameterSpec,
  typedOperations,
} from '../../lib/http-api/index.ts';
import type { Operations } from '../api-types.ts';
import type { PlatformContext } from '../context.ts';
import type { PlatformErrorCode } from '../errors.ts';
import type { Access } from './auth.ts';
import { pathParameterNamed } from './routes/contract.ts';

/**
 * A management API operation as its group's table (`operations`) holds it. The handler's types
 * come from the generated `Operations` (src/platform/api-types.ts) by its operationId, the table's
 * key: params, query and body as the schemas validate them, and the answer as the document
 * promises it. A handler answering another shape fails `tsc`; change the schema, regenerate
 * (`npm run generate:api-types`), then the handler.
 */
export type ManagementRoute<Id extends keyof Operations> = Omit<
  Operation<
    PlatformContext,
    Operations[Id]['params'],
    Operations[Id]['query'],
    Operations[Id]['body'],
    Operations[Id]['answer']
  >,
  'operationId' | 'method' | 'path' | 'tags' | 'access' | 'parameters' | 'errors'
> & {
  /** The method and the OpenAPI path: `'GET /api/v1/projects/{slug}'`. */
  readonly route: `${HttpMethod} /api/v1/${string}`;
  /** Who may call it; any signed-in account when left out. */
  readonly access?: Access;
  /**
   * Its query and header parameters. The path's own come from the path (`pathParameters`); one
   * listed here replaces its description there.
   */
  readonly parameters?: readonly ParameterSpec[];
  /** The codes its own work can answer; those of its access, method and path are added. */
  readonly errors?: readonly PlatformErrorCode[];
};

/** One operation written out whole (operationId, method, path, tags, every code), typed as above. */
export const managementOperation = typedOperations<PlatformContext, Operations>();

/** A group's operations, by operationId, all under the OpenAPI tag `tag`, in the table's order. */
export function operations<Ids extends keyof Operations>(
  tag: string,
  table: { readonly [Id in Ids]: ManagementRoute<Id> },
): AnyOperation<PlatformContext>[] {
  return Object.entries<ManagementRoute<Ids>>(table).map(([operationId, spec]) => {
    const { route, parameters = [], errors = [], ...rest } = spec;
    const [method, path] = route.split(' ') as [HttpMethod, string];
    const inPath = [...path.matchAll(/\{(\w+)\}/g)].map(([, name = '']) => {
      const parameter = pathParameterNamed(name);
      if (!parameter) throw new Error(`${operationId}: routes/contract.ts has no path parameter ${name}`);
      return parameter;
    });
    return {
      ...rest,
      operationId,
      method,
      path,
      tags: [tag],
      parameters: [
        ...inPath.map(
          ({ spec }) => parameters.find((own) => own.in === 'path' && own.name === spec.name) ?? spec,
        ),
        ...parameters.filter((own) => own.in !== 'path'),
      ],
      errors: errorsOf(
        spec.access ?? 'user',
        method,
        inPath.map(({ notFound }) => notFound),
        errors,
      ),
    } as AnyOperation<PlatformContext>;
  });
}

/**
 * Every code an operation declares: what signing in can answer for its access and method
 * (auth.ts: no or a bad sign-in, a cookie change without its CSRF token, a non-admin at an admin
 * route), each path parameter naming nothing visible, its own, then what an API token can answer
 * (expired; read-only, for a change).
 */
function errorsOf(
  access: Access,
  method: HttpMethod,
  notFound: readonly PlatformErrorCode[],
  own: readonly PlatformErrorCode[],
): PlatformErrorCode[] {
  const signedIn = access !== 'public';
  const change = method !== 'GET';
  const codes: (PlatformErrorCode | false)[] = [
    signedIn && 'unauthenticated',
    signedIn && change && 'csrf_failed',
    access === 'admin' && 'forbidden',
    ...notFound,
    ...own,
    signedIn && 'token_expired',
    signedIn && change && 'token_read_only',
  ];
  return [...new Set(codes.filter((code) => typeof code === 'string'))];
}
