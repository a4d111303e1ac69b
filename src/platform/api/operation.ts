import { typedOperations } from '../../lib/http-api/index.ts';
import type { Operations } from '../api-types.ts';
import type { PlatformContext } from '../context.ts';

/**
 * Defines a management API operation with its handler's types taken from the generated
 * `Operations` (src/platform/api-types.ts) by its operationId: params, query and body as the
 * schemas validate them, and the answer as the document promises it. A handler answering another
 * shape fails `tsc`; change the schema, regenerate (`npm run generate:api-types`), then the handler.
 */
export const managementOperation = typedOperations<PlatformContext, Operations>();
