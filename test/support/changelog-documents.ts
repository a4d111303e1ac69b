/**
 * Three versions of a small API for the changelog's tests (test/edge/changelog.test.ts,
 * test/web/changelog-page.test.ts): V2 adds operations, one with a hostile path and summary; V3
 * removes one never deprecated (breaking).
 */
export const HOSTILE_TITLE = '<script>alert("title")</script> & Pets';
export const HOSTILE_PATH = '/search/<script>alert(1)</script>';

export const operation = (operationId: string | undefined, tags: string[] | undefined, summary: string) => ({
  ...(operationId && { operationId }),
  ...(tags && { tags }),
  summary,
  responses: { '200': { description: 'OK' } },
});

/** The first version: three operations, one without tags (Swagger UI files it under `default`). */
export const V1 = {
  openapi: '3.0.3',
  info: { title: HOSTILE_TITLE, version: '1.0.0' },
  paths: {
    '/pets': { get: operation('listPets', ['pets'], 'List pets') },
    '/pets/{petId}': {
      parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'string' } }],
      get: operation('showPetById', ['pets'], 'Show a pet'),
      delete: operation(undefined, undefined, 'Delete a pet'),
    },
  },
};
/** Adds two operations (not breaking): one tagged, one with a hostile path and summary, no operationId. */
export const V2 = {
  ...V1,
  info: { ...V1.info, version: '1.1.0' },
  paths: {
    ...V1.paths,
    '/pets/{petId}/toys': {
      parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'string' } }],
      get: operation('listToys', ['pets'], 'List toys'),
    },
    [HOSTILE_PATH]: { get: operation(undefined, undefined, '<script>alert("summary")</script>') },
  },
};
/** Removes `DELETE /pets/{petId}`, never deprecated: breaking. */
export const V3 = (() => {
  const { delete: _removed, ...pet } = V2.paths['/pets/{petId}'];
  return { ...V2, info: { ...V2.info, version: '2.0.0' }, paths: { ...V2.paths, '/pets/{petId}': pet } };
})();
