export { type CommonErrorCode, commonErrors, implicitErrorCodes } from './common-errors.ts';
export { installErrorHandling } from './error-handling.ts';
export { createJsonApi } from './json-api.ts';
export { buildOpenApiDocument, type DocumentInfo, errorCodesOf, KENNEL_LICENSE } from './openapi.ts';
export {
  type AnyOperation,
  defineOperation,
  fastifyPath,
  type HeaderSpec,
  type HttpMethod,
  type JsonSchema,
  type Operation,
  type OperationRequest,
  type OperationTypes,
  type ParameterSpec,
  type ResponseSpec,
  typedOperations,
} from './operation.ts';
export { registerOperations } from './register-operations.ts';
export { requestIdOf } from './request-id.ts';
export { inlineRefs, ref } from './schema-refs.ts';
export { validatorCompiler } from './validation.ts';
