import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { type Change, diffDocuments, RULES } from '../../../src/lib/openapi-diff/index.ts';
import { OPERATION_METHODS } from '../../../src/lib/operation-matcher.ts';

/**
 * Two published versions of a real API: GitHub's REST description as @octokit/openapi 22.0.0
 * (devDependency `octokit-openapi-prev`) and 23.x shipped it. Between them GitHub retired team
 * discussions (never marked deprecated) and tag protection (deprecated, with no sunset date), and added the Copilot agents
 * and spaces endpoints. The operations added and removed are checked against a plain set
 * difference computed here, independently of the engine; the rest against changes read in the
 * two files by hand.
 */
const require = createRequire(import.meta.url);
const load = (name: string) =>
  JSON.parse(readFileSync(require.resolve(`${name}/generated/api.github.com.json`), 'utf8')) as Record<
    string,
    unknown
  >;

type Json = Record<string, unknown>;
function operations(document: Json): Map<string, Json> {
  const found = new Map<string, Json>();
  for (const [template, item] of Object.entries(document.paths as Record<string, Json>))
    for (const method of OPERATION_METHODS)
      if (item[method] !== undefined) found.set(`${method.toUpperCase()} ${template}`, item[method] as Json);
  return found;
}

const at = (document: Json, location: string) =>
  location
    .slice(1)
    .split('/')
    .reduce<unknown>(
      (node, token) => (node as Json | undefined)?.[token.replaceAll('~1', '/').replaceAll('~0', '~')],
      document,
    );

describe('openapi-diff on two published versions of GitHub’s REST description', () => {
  const base = load('octokit-openapi-prev');
  const revision = load('@octokit/openapi');
  const changes = diffDocuments(base, revision, { now: new Date('2026-11-27T00:00:00Z') });
  const find = (id: string, operation: string) =>
    changes.filter((c) => c.id === id && c.operation === operation);

  it('reports exactly the operations a set difference finds added and removed', () => {
    const before = operations(base);
    const after = operations(revision);
    const removed = [...before.keys()].filter((key) => !after.has(key)).sort();
    const added = [...after.keys()].filter((key) => !before.has(key)).sort();
    assert.equal(removed.length, 40);
    assert.equal(added.length, 155);
    const reportedRemoved = changes
      .filter((c) => c.id.startsWith('api-removed-'))
      .map((c) => c.operation)
      .sort();
    const reportedAdded = changes
      .filter((c) => c.id === 'endpoint-added')
      .map((c) => c.operation)
      .sort();
    assert.deepEqual(reportedRemoved, removed);
    assert.deepEqual(reportedAdded, added);
    // Tag protection was deprecated but named no sunset date: still breaking, like the rest.
    for (const operation of removed) {
      const [change] = changes.filter((c) => c.operation === operation);
      const deprecated = before.get(operation)?.deprecated === true;
      assert.equal(
        change?.id,
        deprecated ? 'api-removed-without-sunset' : 'api-removed-without-deprecation',
        operation,
      );
      assert.equal(change?.level, 'breaking');
    }
    assert.equal(find('api-removed-without-sunset', 'GET /repos/{owner}/{repo}/tags/protection').length, 1);
    assert.equal(
      find('api-removed-without-deprecation', 'GET /orgs/{org}/teams/{team_slug}/discussions').length,
      1,
    );
  });

  it('finds the schema changes read in the two files', () => {
    const expected: [string, string, string][] = [
      // app-permissions gained "read" for organization_copilot_seat_management, and lost team_discussions.
      [
        'response-property-enum-value-added',
        'GET /app/installations/{installation_id}',
        '/components/schemas/app-permissions/properties/organization_copilot_seat_management',
      ],
      [
        'response-optional-property-removed',
        'GET /app/installations/{installation_id}',
        '/components/schemas/app-permissions/properties/team_discussions',
      ],
      [
        'request-property-removed',
        'POST /app/installations/{installation_id}/access_tokens',
        '/components/schemas/app-permissions/properties/team_discussions',
      ],
      // Iteration fields of Projects v2 now require their start date and duration.
      [
        'request-property-became-required',
        'POST /orgs/{org}/projectsV2/{project_number}/fields',
        '/components/schemas/projects-v2-field-iteration-configuration/properties/start_date',
      ],
      // A code security configuration's description can now be null.
      [
        'response-property-became-nullable',
        'GET /enterprises/{enterprise}/code-security/configurations/{configuration_id}',
        '/components/schemas/code-security-configuration/properties/description',
      ],
      // The SARIF media type of a code scanning analysis is gone.
      [
        'response-media-type-removed',
        'GET /repos/{owner}/{repo}/code-scanning/analyses/{analysis_id}',
        '/paths/~1repos~1{owner}~1{repo}~1code-scanning~1analyses~1{analysis_id}/get/responses/200/content/application~1json+sarif',
      ],
    ];
    for (const [id, operation, location] of expected) {
      const found = find(id, operation);
      const change = found.find((c) => c.location === location);
      assert.ok(change, `${id} ${operation} ${location}`);
      assert.equal(change.level, RULES[id]?.level);
    }
    const sarif = find(
      'response-media-type-removed',
      'GET /repos/{owner}/{repo}/code-scanning/analyses/{analysis_id}',
    )[0];
    assert.equal(sarif?.message, 'The 200 response is no longer application/json+sarif.');
  });

  it('points every change at a place that exists (the revision, or the base for removals)', () => {
    const nowhere: Change[] = changes.filter(
      (change) => at(revision, change.location) === undefined && at(base, change.location) === undefined,
    );
    assert.deepEqual(nowhere, []);
    for (const change of changes) assert.ok(RULES[change.id], change.id);
  });

  it('finds nothing between a document and itself', () => {
    assert.deepEqual(diffDocuments(revision, structuredClone(revision)), []);
  });
});
