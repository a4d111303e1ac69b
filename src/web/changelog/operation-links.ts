/**
 * Where each operation of a document lives in its reference: the fragment Swagger UI's deep
 * linking (`deepLinking: true` in src/web/reference/reference.js) opens, `#/{tag}/{operationId}`.
 * Swagger UI files an operation under each of its tags (`default` when it has none) and names it
 * by its operationId with every non-word character made `_`, or, without one, by its method and
 * path written the same way (`get_pets__petId_`); both parts are URI-encoded. This repeats its
 * rules (swagger-ui's `opId`, `idFromPathMethod` and the deep-linking plugin's `show`) because the
 * changelog is rendered on the server, where Swagger UI does not run.
 */

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Swagger UI's name for an operation (its `opId` without the Swagger 2 compatibility mode). */
export function swaggerUiOperationId(
  operation: Record<string, unknown>,
  path: string,
  method: string,
): string {
  const declared = typeof operation.operationId === 'string' ? operation.operationId : '';
  if (declared.replace(/\s/g, '').length > 0) return declared.replace(/\W/g, '_');
  return `${method}${path.replace(/\W/g, '_')}`;
}

/**
 * `'GET /pets/{petId}'` → `'#/pets/showPetById'` for every operation under `paths` (the form of
 * a Change's `operation`). An operation the document no longer has has no link.
 */
export function operationLinks(document: Record<string, unknown>): Record<string, string> {
  const links: Record<string, string> = {};
  const paths = document.paths;
  if (paths === null || typeof paths !== 'object') return links;
  for (const [path, item] of Object.entries(paths as Record<string, unknown>)) {
    if (item === null || typeof item !== 'object') continue;
    for (const method of METHODS) {
      const operation = (item as Record<string, unknown>)[method];
      if (operation === null || typeof operation !== 'object') continue;
      const op = operation as Record<string, unknown>;
      const tags = Array.isArray(op.tags) ? op.tags.filter((tag) => typeof tag === 'string') : [];
      const tag = (tags[0] as string | undefined) ?? 'default';
      const id = swaggerUiOperationId(op, path, method);
      links[`${method.toUpperCase()} ${path}`] = `#/${encodeURIComponent(tag)}/${encodeURIComponent(id)}`;
    }
  }
  return links;
}
