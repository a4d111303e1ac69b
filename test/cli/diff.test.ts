import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type CliTeam, scratchDir, show, startCliTeam } from '../support/cli-setup.ts';
import { testDialects } from '../support/databases.ts';
import { kennelIn } from './harness.ts';

const pet = (required: string[]) => ({
  type: 'object',
  required,
  properties: { id: { type: 'string' }, name: { type: 'string' } },
});
const json = (pets: Record<string, unknown>) =>
  JSON.stringify({ openapi: '3.0.3', info: { title: 'Pets', version: '1.0.0' }, ...pets });
const BASE = json({
  paths: {
    '/pets/{id}': {
      get: {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          200: {
            description: 'a pet',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } },
          },
        },
      },
      delete: {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { 204: { description: 'gone' } },
      },
    },
  },
  components: { schemas: { Pet: pet(['id', 'name']) } },
});
/** As YAML: the path parameter renamed (no change), DELETE removed and `name` optional (both breaking). */
const BREAKING_YAML = `openapi: 3.0.3
info: { title: Pets, version: 2.0.0 }
paths:
  /pets/{petId}:
    get:
      parameters:
        - { name: petId, in: path, required: true, schema: { type: string } }
      responses:
        '200':
          description: a pet
          content:
            application/json:
              schema: { $ref: '#/components/schemas/Pet' }
components:
  schemas:
    Pet:
      type: object
      required: [id]
      properties: { id: { type: string }, name: { type: string } }
`;
/** Adds an operation and an optional property: nothing breaks. */
const ADDITIVE = json({
  paths: {
    ...JSON.parse(BASE).paths,
    '/toys': { get: { responses: { 200: { description: 'toys' } } } },
  },
  components: {
    schemas: {
      Pet: { ...pet(['id', 'name']), properties: { ...pet([]).properties, tag: { type: 'string' } } },
    },
  },
});
const INVALID = json({
  info: { title: 'no version' },
  paths: { '/a': { get: { responses: { 200: { content: 'nope' } } } } },
});

describe('kennel diff BASE REVISION (offline)', () => {
  const files = scratchDir('kennel-diff-');
  const { file } = files;
  const kennel = kennelIn({ KENNEL_CONFIG_DIR: files.path });
  after(() => files.remove());

  it('exits 1 when something breaks, printing the changes grouped by level with the rule and place', async () => {
    const result = await kennel('diff', file('base.json', BASE), file('revision.yaml', BREAKING_YAML));
    assert.equal(result.code, 1, show(result));
    assert.equal(
      result.stdout,
      [
        `2 changes from ${join(files.path, 'base.json')} to ${join(files.path, 'revision.yaml')}: 2 breaking, 0 warnings, 0 info.`,
        '',
        'Breaking (2)',
        '  GET /pets/{petId}',
        '    - Property `name` of the 200 response (application/json) became optional: it may be missing.',
        '      response-property-became-optional at /components/schemas/Pet/properties/name',
        '  DELETE /pets/{id}',
        '    - DELETE /pets/{id} was removed without being deprecated first.',
        '      api-removed-without-deprecation at /paths/~1pets~1{id}/delete',
        '',
      ].join('\n'),
    );
    assert.equal(result.stderr, '');
  });

  it('--json prints {breaking, changes} with every field', async () => {
    const result = await kennel(
      'diff',
      file('base.json', BASE),
      file('revision.yaml', BREAKING_YAML),
      '--json',
    );
    assert.equal(result.code, 1, show(result));
    assert.deepEqual(JSON.parse(result.stdout), {
      breaking: true,
      changes: [
        {
          id: 'response-property-became-optional',
          level: 'breaking',
          operation: 'GET /pets/{petId}',
          location: '/components/schemas/Pet/properties/name',
          message:
            'Property `name` of the 200 response (application/json) became optional: it may be missing.',
        },
        {
          id: 'api-removed-without-deprecation',
          level: 'breaking',
          operation: 'DELETE /pets/{id}',
          location: '/paths/~1pets~1{id}/delete',
          message: 'DELETE /pets/{id} was removed without being deprecated first.',
        },
      ],
    });
  });

  it('exits 0 when nothing breaks, and when nothing changed', async () => {
    const additive = await kennel('diff', file('base.json', BASE), file('additive.json', ADDITIVE), '--json');
    assert.equal(additive.code, 0, show(additive));
    const body = JSON.parse(additive.stdout);
    assert.equal(body.breaking, false);
    assert.deepEqual(
      body.changes.map(
        (c: { id: string; level: string; operation: string }) => `${c.id} ${c.level} ${c.operation}`,
      ),
      ['response-optional-property-added info GET /pets/{id}', 'endpoint-added info GET /toys'],
    );
    const same = await kennel('diff', file('base.json', BASE), file('base.json', BASE));
    assert.equal(same.code, 0, show(same));
    assert.equal(
      same.stdout,
      `No changes between ${join(files.path, 'base.json')} and ${join(files.path, 'base.json')}.\n`,
    );
  });

  it('exits 2 for an invalid document, listing its problems', async () => {
    const result = await kennel('diff', file('base.json', BASE), file('invalid.json', INVALID));
    assert.equal(result.code, 2, show(result));
    assert.equal(result.stdout, '');
    assert.equal(
      result.stderr,
      [
        `error: ${join(files.path, 'invalid.json')} is not a valid OpenAPI document: (invalid_document)`,
        '  - /info: the field `version` is missing.',
        '  - /paths/~1a/get/responses/200: the field `description` is missing.',
        '  - /paths/~1a/get/responses/200/content must be object.',
        '',
      ].join('\n'),
    );
    const notOpenApi = await kennel('diff', file('base.json', BASE), file('list.yaml', '- a\n- b\n'));
    assert.equal(notOpenApi.code, 2, show(notOpenApi));
    assert.match(notOpenApi.stderr, /must be an object with an `openapi` field/);
    const broken = await kennel('diff', file('base.json', BASE), file('broken.json', '{"openapi": '));
    assert.equal(broken.code, 2, show(broken));
    assert.match(broken.stderr, /It is not valid JSON/);
  });

  it('exits 2 for a usage error or a file that cannot be read', async () => {
    const one = await kennel('diff', file('base.json', BASE));
    assert.equal(one.code, 2, show(one));
    assert.match(
      one.stderr,
      /^error: missing REVISION: give two files, or --project SLUG and one file\.\nusage: kennel diff BASE \[REVISION\] \[options\]\n/,
    );
    const three = await kennel('diff', 'a', 'b', 'c');
    assert.equal(three.code, 2, show(three));
    assert.match(three.stderr, /unexpected argument "c"/);
    const missing = await kennel('diff', file('base.json', BASE), join(files.path, 'nope.json'));
    assert.equal(missing.code, 2, show(missing));
    assert.match(missing.stderr, /Cannot read .*nope\.json: no such file\. \(file_unreadable\)/);
  });

  it('colours the levels on a terminal only, never with NO_COLOR', async () => {
    const args = ['diff', file('base.json', BASE), file('revision.yaml', BREAKING_YAML)];
    const tty = await kennelIn({ KENNEL_CONFIG_DIR: files.path }, { tty: true })(...args);
    assert.ok(tty.stdout.includes('\x1b[1;31mBreaking (2)\x1b[0m'), tty.stdout);
    const noColor = await kennelIn({ KENNEL_CONFIG_DIR: files.path, NO_COLOR: '1' }, { tty: true })(...args);
    assert.ok(!noColor.stdout.includes('\x1b['), noColor.stdout);
    const piped = await kennel(...args);
    assert.ok(!piped.stdout.includes('\x1b['), piped.stdout);
  });

  it('has help naming both forms and the exit codes', async () => {
    const help = await kennel('diff', '--help');
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage:\n {2}kennel diff BASE \[REVISION\] \[options\]$/m);
    assert.match(help.stdout, /kennel diff --project SLUG FILE/);
    assert.match(help.stdout, /0 nothing breaking, 1 something breaks callers, 2 a usage error/);
  });
});

for (const dialect of testDialects()) {
  describe(`kennel diff --project SLUG FILE (${dialect})`, () => {
    let team: CliTeam;
    let kennel: CliTeam['kennel'];
    let file: CliTeam['file'];

    before(async () => {
      team = await startCliTeam(dialect, {
        projects: [{ slug: 'pets', document: BASE }, { slug: 'empty' }],
        prefix: 'kennel-diff-project-',
      });
      ({ kennel, file } = team);
    });
    after(() => team?.close());

    it("compares the file with the project's live deploy", async () => {
      const breaking = await kennel(
        'diff',
        '--project',
        'pets',
        file('revision.yaml', BREAKING_YAML),
        '--json',
      );
      assert.equal(breaking.code, 1, show(breaking));
      assert.deepEqual(
        JSON.parse(breaking.stdout).changes.map((c: { id: string }) => c.id),
        ['response-property-became-optional', 'api-removed-without-deprecation'],
      );
      const fine = await kennel('diff', '--project', 'pets', file('additive.json', ADDITIVE));
      assert.equal(fine.code, 0, show(fine));
      assert.match(
        fine.stdout,
        /^2 changes from pets \(live\) to .*additive\.json: 0 breaking, 0 warnings, 2 info\.$/m,
      );
    });

    it('says so when there is nothing live, or no such project, or two files are given', async () => {
      const empty = await kennel('diff', '--project', 'empty', file('additive.json', ADDITIVE));
      assert.equal(empty.code, 2, show(empty));
      assert.match(
        empty.stderr,
        /empty has no live deploy to compare with: deploy a document first \(kennel deploy empty FILE\)\. \(no_live_deploy\)/,
      );
      const unknown = await kennel('diff', '--project', 'nope', file('additive.json', ADDITIVE));
      assert.equal(unknown.code, 1, show(unknown));
      assert.match(unknown.stderr, /\(project_not_found\)/);
      const two = await kennel('diff', '--project', 'pets', 'a.json', 'b.json');
      assert.equal(two.code, 2, show(two));
      assert.match(two.stderr, /with --project give one FILE/);
    });

    it('needs credentials', async () => {
      const anonymous = kennelIn({
        KENNEL_URL: team.server.url,
        KENNEL_CONFIG_DIR: join(team.files.path, 'none'),
      });
      const result = await anonymous('diff', '--project', 'pets', file('additive.json', ADDITIVE));
      assert.equal(result.code, 3, show(result));
    });
  });
}
