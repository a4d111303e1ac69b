import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { testDialects } from '../support/databases.ts';
import { OPENAPI_31_DOCUMENT } from '../support/openapi-31.ts';
import { clubApiSuite } from '../support/platform-deploys.ts';

/**
 * Deploys take OpenAPI 3.1 as well as 3.0.x, through the management API: a valid 3.1 document
 * (webhooks, JSON Schema 2020-12 types) becomes the active deploy, in JSON or YAML; an invalid one
 * is kept as a failed deploy with the validator's problems, its webhooks validated too; other
 * versions are still refused.
 */
for (const dialect of testDialects()) {
  describe(`OpenAPI 3.1 deploys through the management API (${dialect})`, () => {
    const club = clubApiSuite(dialect);
    const { deploy } = club;

    it('makes a valid 3.1 document with webhooks the active deploy, in JSON and in YAML', async () => {
      const json = await deploy(JSON.stringify(OPENAPI_31_DOCUMENT));
      assert.deepEqual(
        { status: json.status, active: json.active, problems: json.problems, format: json.sourceFormat },
        { status: 'succeeded', active: true, problems: [], format: 'json' },
      );
      const yaml = await deploy(stringify(OPENAPI_31_DOCUMENT));
      assert.deepEqual(
        { status: yaml.status, active: yaml.active, problems: yaml.problems, format: yaml.sourceFormat },
        { status: 'succeeded', active: true, problems: [], format: 'yaml' },
      );
      // What is stored, and published, is the document as sent: webhooks and all.
      const row = await club.api.p.ctx.db
        .selectFrom('deploys')
        .select('document')
        .where('id', '=', yaml.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual(JSON.parse(String(row.document)), OPENAPI_31_DOCUMENT);
    });

    it('refuses an invalid 3.1 document with its problems, webhooks validated too, and keeps the active deploy', async () => {
      const before = await deploy(JSON.stringify(OPENAPI_31_DOCUMENT));
      const broken = structuredClone(OPENAPI_31_DOCUMENT) as unknown as {
        webhooks: { litterAnnounced: { post: { responses: Record<string, unknown> } } };
      };
      broken.webhooks.litterAnnounced.post.responses['200'] = {};
      const failed = await deploy(JSON.stringify(broken));
      assert.equal(failed.status, 'failed');
      assert.equal(failed.active, false);
      // One problem, where it is, without the "must match else schema" of the schema's if/else.
      const column = JSON.stringify(broken).indexOf('"200":{}') + 1;
      assert.deepEqual(failed.problems, [
        `/webhooks/litterAnnounced/post/responses/200 (line 1, column ${column}): The field "description" is required here: add it.`,
      ]);
      const listed = await club.api.asOwner('GET', '/api/v1/projects/club/deploys');
      const active = listed.body.filter((d) => d.active);
      assert.deepEqual(
        active.map((d) => d.id),
        [before.id],
      );
    });

    it('still refuses versions other than 3.0.x and 3.1.x', async () => {
      for (const version of ['3.2.0', '2.0', '3.1']) {
        const failed = await deploy(JSON.stringify({ ...OPENAPI_31_DOCUMENT, openapi: version }));
        assert.equal(failed.status, 'failed');
        assert.deepEqual(failed.problems, [
          `/openapi (line 1, column 2): openapi is "${version}"; Kennel publishes OpenAPI 3.0.x and 3.1.x documents (e.g. "3.0.3" or "3.1.1").`,
        ]);
      }
    });
  });
}
