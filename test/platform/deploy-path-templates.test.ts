import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { testDialects } from '../support/databases.ts';
import { clubApiSuite } from '../support/platform-deploys.ts';

/**
 * A deploy whose path templates no router can serve unambiguously fails, as any invalid document
 * does (a failed deploy with its problems; the active deploy stays): two parameters with no
 * literal between them, a parameter named twice, two templates differing only in names.
 */
const documentWith = (paths: Record<string, unknown>) =>
  JSON.stringify({ openapi: '3.0.3', info: { title: 'Club', version: '1' }, paths });
const ok = { get: { responses: { '200': { description: 'ok' } } } };

for (const dialect of testDialects()) {
  describe(`deploys refuse ambiguous path templates (${dialect})`, () => {
    const club = clubApiSuite(dialect);
    const { deploy } = club;

    it('keeps a failed deploy naming each template and what to do, and the active deploy', async () => {
      const good = await deploy(documentWith({ '/files/{name}.{ext}': ok, '/pets/{petId}': ok }));
      assert.deepEqual([good.status, good.problems], ['succeeded', []]);
      const adjacent = `/${Array.from({ length: 12 }, (_, i) => `{p${i}}`).join('')}x`;
      const refused = await deploy(
        documentWith({
          [adjacent]: ok,
          '/b/{id}/c/{id}': ok,
          '/pets/{petId}': ok,
          '/pets/{id}': ok,
        }),
      );
      assert.deepEqual(
        { status: refused.status, active: refused.active, problems: refused.problems },
        {
          status: 'failed',
          active: false,
          problems: [
            `/paths/${adjacent.replaceAll('/', '~1')} (line 1, column 67): the parameters {p0} and {p1} have no literal text between them, so no router can tell where one ends: put a separator between them (e.g. {p0}.{p1}) or make them one parameter.`,
            '/paths/~1b~1{id}~1c~1{id} (line 1, column 173): the parameter {id} appears twice: give each path parameter its own name.',
            "/paths/~1pets~1{id}/get (line 1, column 322): GET /pets/{id} differs from GET /pets/{petId} only in its parameters' names, so no router can tell which one a request is for: keep one of them.",
          ],
        },
      );
      const project = await club.api.asOwner('GET', '/api/v1/projects/club');
      assert.equal(project.body.activeDeployId, good.id);
    });
  });
}
