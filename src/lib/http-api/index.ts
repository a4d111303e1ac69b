export { type CommonErrorCode, commonErrors, implicitErrorCodes } from './common-errors.ts';
export {
  createJsonApi,
  installErrorHandling,
  registerOperations,
  requestIdOf,
  validatorCompiler,
} from './fastify-kit.ts';
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
  type ParameterSpec,
  type ResponseSpec,
} from './operation.ts';
export { inlineRefs, ref } from './schema-refs.ts';
