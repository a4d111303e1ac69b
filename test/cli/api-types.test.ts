import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { API_TYPES_FILE, apiTypesDrift, generateApiTypes } from '../../scripts/generate-api-types.ts';
import { managementDocument } from '../../src/platform/api/app.ts';
import { managementOperation } from '../../src/platform/api/operation.ts';
import { answerCreated, inProject } from '../../src/platform/api/routes/answers.ts';
import { type PathIds, pathParameterNamed } from '../../src/platform/api/routes/contract.ts';
import { ROOT } from './harness.ts';

const document = managementDocument() as {
  paths: Record<string, Record<string, { operationId: string }>>;
  components: { schemas: Record<string, { properties?: object }> };
};

describe("the management API's types are generated from its OpenAPI document", () => {
  it('src/platform/api-types.ts is what npm run generate:api-types writes today', () => {
    const drift = apiTypesDrift(readFileSync(API_TYPES_FILE, 'utf8'));
    assert.equal(
      drift,
      undefined,
      `src/platform/api-types.ts has drifted (${drift}): run npm run generate:api-types`,
    );
  });

  it('notices a drift, at the line where it is', () => {
    const generated = generateApiTypes();
    // What a hand edit, or a schema change the file missed, looks like.
    const edited = generated.replace('\n  hostname: string;\n', '\n  hostname?: string;\n');
    assert.notEqual(edited, generated, 'the edit applies');
    const line = edited.split('\n').indexOf('  hostname?: string;') + 1;
    assert.equal(
      apiTypesDrift(edited, generated),
      `line ${line}: expected "  hostname: string;", found "  hostname?: string;"`,
    );
    assert.match(
      apiTypesDrift(`${generated}\nexport type Extra = 1;\n`, generated) ?? '',
      /^line \d+: expected "\(end of file\)"/,
    );
  });

  it('declares every schema of the document, and each one with every property', () => {
    const text = generateApiTypes();
    const names = Object.keys(document.components.schemas);
    assert.ok(names.length > 50, 'the schemas were found');
    for (const name of names) {
      assert.match(text, new RegExp(`^export (interface|type) ${name}\\b`, 'm'), name);
      for (const property of Object.keys(document.components.schemas[name]?.properties ?? {})) {
        assert.match(text, new RegExp(`^ {2}${property}\\??: `, 'm'), `${name}.${property}`);
      }
    }
    // Nullable, optional and enum members keep their meaning.
    assert.match(text, /^ {2}role\?: 'owner' \| 'member' \| null;$/m);
    assert.match(text, /^ {2}status: 'unverified' \| 'verified' \| 'issuing' \| 'live' \| 'failed';$/m);
    assert.match(text, /^export interface CreatedToken extends Token \{$/m);
  });

  it("declares each operation's params, query, body and answer by operationId", () => {
    const text = generateApiTypes();
    const operations = text.slice(text.indexOf('export interface Operations {'));
    const ids = Object.values(document.paths).flatMap((methods) =>
      Object.values(methods).map((op) => op.operationId),
    );
    assert.ok(ids.length > 50, 'the operations were found');
    /** An operation's line, joined into one when biome's layout breaks it. */
    const entry = (id: string) => {
      const start = operations.indexOf(`\n  ${id}: OperationTypes<`);
      assert.notEqual(start, -1, id);
      return operations
        .slice(start + 1, operations.indexOf('>;\n', start) + 2)
        .replace(/<\n\s+/, '<')
        .replaceAll(/,\n\s+/g, ', ')
        .replace(/\n\s*>;$/, '>;');
    };
    for (const id of ids) assert.match(entry(id), /^ {2}\w+: OperationTypes<.+>;$/, id);
    // A body and a schema's answer; a path parameter's type; a 204 answers nothing.
    assert.equal(
      entry('createToken'),
      '  createToken: OperationTypes<NoInput, NoInput, NewToken, CreatedToken>;',
    );
    assert.equal(
      entry('revokeToken'),
      '  revokeToken: OperationTypes<{ tokenId: number }, NoInput, undefined, undefined>;',
    );
    // An optional query parameter with an enum; an array answer; two successes are either.
    assert.equal(
      entry('getDeployDocument'),
      "  getDeployDocument: OperationTypes<{ slug: string; deployId: number }, { format?: 'json' | 'yaml' }, undefined, Record<string, unknown> | string>;",
    );
    assert.match(entry('listTokens'), /, Token\[\]>;$/);
    assert.match(entry('createDeploy'), /, NewDeploy, DeployCheck \| Deploy>;$/);
    // An answer only in another media type (the event stream) is the handler's own to send.
    assert.match(entry('streamRequestLogs'), /\{ after\?: number \}, undefined, undefined \| string>;$/);
  });

  it('npm run generate:api-types -- --check passes on the committed file', () => {
    const out = execFileSync(process.execPath, ['scripts/generate-api-types.ts', '--check'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    assert.equal(out, '');
  });
});

describe("the path parameters' types come from the one pathParameters table (tsc checks this)", () => {
  it('an integer parameter is a number, the rest text; a name not in the table is none', () => {
    const ids: Pick<PathIds, 'teamId' | 'deployId' | 'slug' | 'messageId'> = {
      teamId: 7,
      deployId: 3,
      slug: 'pets',
      messageId: 'msg_1',
    };
    // @ts-expect-error a team id is a number
    const teamId: PathIds['teamId'] = '7';
    // @ts-expect-error a message id is text
    const messageId: PathIds['messageId'] = 1;
    // @ts-expect-error no path parameter has this name
    const unknown: PathIds['noSuchId'] = 1;
    assert.deepEqual([ids, teamId, messageId, unknown], [ids, '7', 1, 1]);
    assert.deepEqual(pathParameterNamed('teamId')?.spec.schema, { type: 'integer', minimum: 1 });
    assert.equal(pathParameterNamed('noSuchId'), undefined);
  });
});

describe('a management operation takes its types from the generated Operations (tsc checks this)', () => {
  const contract = { method: 'GET', path: '/', tags: [], summary: '', description: '', errors: [] } as const;

  it("types the handler's params, query and body, and holds its answer to the schema", () => {
    const getTeam = managementOperation({
      ...contract,
      operationId: 'getTeam',
      responses: {},
      handler: async ({ params, body }) => {
        const teamId: number = params.teamId;
        // @ts-expect-error getTeam has no path parameter `slug`
        params.slug;
        // @ts-expect-error getTeam takes no body
        body.name;
        return { id: teamId, name: 'Team', plan: 'pro', role: null };
      },
    });
    const listTeams = managementOperation({
      ...contract,
      operationId: 'listTeams',
      responses: {},
      // @ts-expect-error a Team's plan is one of the plans' names
      handler: async () => [{ id: 1, name: 'Team', plan: 'gold' }],
    });
    const createTeam = managementOperation({
      ...contract,
      operationId: 'createTeam',
      responses: {},
      // @ts-expect-error through a shared handler too: a Team has a name and a plan
      handler: answerCreated(async ({ body }) => ({ id: 1, name: body.name })),
    });
    const getTeamBySlug = managementOperation({
      ...contract,
      operationId: 'getTeam',
      responses: {},
      // @ts-expect-error getTeam's path has a teamId, not the slug inProject reads
      handler: inProject(async () => ({ id: 1, name: 'Team', plan: 'pro' as const })),
    });
    const revokeToken = managementOperation({
      ...contract,
      operationId: 'revokeToken',
      responses: {},
      // A 204: the handler sends it, and answers with the reply.
      handler: async (_request, reply) => reply.code(204).send(),
    });
    const unknown = managementOperation({
      ...contract,
      // @ts-expect-error no operation has this id
      operationId: 'noSuchOperation',
      responses: {},
      handler: async () => undefined,
    });
    assert.deepEqual(
      [getTeam, listTeams, createTeam, getTeamBySlug, revokeToken, unknown].map((op) => op.operationId),
      ['getTeam', 'listTeams', 'createTeam', 'getTeam', 'revokeToken', 'noSuchOperation'],
    );
  });
});
