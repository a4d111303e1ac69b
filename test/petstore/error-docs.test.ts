import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { ErrorSpec } from '../../src/lib/api-error.ts';
import { petstoreErrors, petstoreOperations } from '../../src/petstore/index.ts';
import { checkErrorDoc, declaredCodes, HEADER_LINE, parseTable, ROUTE_CELL } from '../support/error-docs.ts';
import { TEST_DEPRECATION } from '../support/petstore.ts';

/**
 * docs/errors.md lists every code of the catalog with its status, meaning and the operations
 * that declare it, and nothing else. This keeps the page, the catalog and the operations in step.
 */

const DOC_PATH = new URL('../../docs/errors.md', import.meta.url);
function rowOf(markdown: string, code: string): string {
  const row = markdown.split('\n').find((l) => new RegExp(`^\\|\\s*\`${code}\`\\s*\\|`).test(l));
  assert.ok(row, `no row for ${code}`);
  return row;
}

/** The page with one row rewritten. */
function editRow(markdown: string, code: string, edit: (row: string) => string): string {
  const row = rowOf(markdown, code);
  return markdown.replace(row, edit(row));
}

describe('docs/errors.md', () => {
  const markdown = readFileSync(DOC_PATH, 'utf8');
  const catalog = petstoreErrors.specs as Readonly<Record<string, ErrorSpec>>;
  const declared = declaredCodes(petstoreOperations(TEST_DEPRECATION));

  it('lists every code of the catalog with its status, meaning and operations, and nothing else', () => {
    assert.deepEqual(checkErrorDoc(markdown, catalog, declared), []);
    assert.equal(parseTable(markdown).rows.length, Object.keys(catalog).length);
  });

  it('opens with the Error body { code, message, status } and an example that is a real answer', () => {
    const intro = markdown.slice(0, markdown.search(HEADER_LINE));
    for (const field of ['`code`', '`message`', '`status`']) assert.ok(intro.includes(field), field);
    const example = /```json\n([\s\S]*?)\n```/.exec(intro)?.[1];
    assert.ok(example, 'no JSON example before the table');
    const body = JSON.parse(example) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['code', 'message', 'status']);
    const spec = catalog[String(body.code)];
    assert.ok(spec, `the example's code ${String(body.code)} is not in the catalog`);
    assert.equal(body.status, spec.status);
    assert.equal(typeof body.message, 'string');
    assert.match(intro, new RegExp(`HTTP/1\\.1 ${spec.status} `), 'the example shows the HTTP status');
  });

  it('the check fails on each kind of drift', () => {
    const mutations: { name: string; edit: (md: string) => string; problems: string[] }[] = [
      {
        name: 'a code missing',
        edit: (md) => md.replace(`${rowOf(md, 'unknown_pet')}\n`, ''),
        problems: ['unknown_pet is in the catalog but not in docs/errors.md'],
      },
      {
        name: 'a wrong status',
        edit: (md) => editRow(md, 'insufficient_stock', (row) => row.replace(/\| 409(\s+)\|/, '| 400$1|')),
        problems: ['insufficient_stock: docs/errors.md says 400, the catalog 409'],
      },
      {
        name: 'an operation left out',
        edit: (md) => editRow(md, 'pet_not_found', (row) => row.replace('`getPet`, ', '')),
        problems: [
          'pet_not_found: docs/errors.md lists [deletePet, updatePet], the operations declare [deletePet, getPet, updatePet]',
        ],
      },
      {
        name: 'an operation that does not declare the code',
        edit: (md) =>
          editRow(md, 'category_in_use', (row) =>
            row.replace('`deleteCategory`', '`deleteCategory`, `listPets`'),
          ),
        problems: [
          'category_in_use: docs/errors.md lists [deleteCategory, listPets], the operations declare [deleteCategory]',
        ],
      },
      {
        name: 'a code the catalog does not have',
        edit: (md) =>
          editRow(md, 'unknown_pet', (row) => `${row}\n| \`teapot\` | 418 | Short and stout. | \`getPet\` |`),
        problems: ['teapot is in docs/errors.md but not in the catalog'],
      },
      {
        name: 'a code listed twice',
        edit: (md) => editRow(md, 'unknown_pet', (row) => `${row}\n${row}`),
        problems: ['unknown_pet is listed twice'],
      },
      {
        name: 'operations listed for an unknown route',
        edit: (md) => editRow(md, 'route_not_found', (row) => row.replace(ROUTE_CELL, '`getPet`')),
        problems: [`route_not_found: operations must read "${ROUTE_CELL}"`],
      },
      {
        name: 'an operation missing from a code’s list',
        edit: (md) => editRow(md, 'bad_request', (row) => row.replace(', `setStock`', '')),
        problems: [
          'bad_request: docs/errors.md lists [createApiKey, createCategory, createPet, createWebhookSubscription, placeOrder, updateCategory, updatePet], the operations declare [createApiKey, createCategory, createPet, createWebhookSubscription, placeOrder, setStock, updateCategory, updatePet]',
        ],
      },
      {
        name: 'a meaning that drifted',
        edit: (md) => md.replace('No category has this id.', 'The category is gone.'),
        problems: [`category_not_found: the meaning differs from the catalog's ("No category has this id.")`],
      },
      {
        name: 'no table',
        edit: (md) => md.replace(HEADER_LINE, '| code | status | meaning |'),
        problems: ['no table with columns code | HTTP status | meaning | operations'],
      },
    ];
    for (const m of mutations) {
      const edited = m.edit(markdown);
      assert.notEqual(edited, markdown, `${m.name}: the edit changed nothing`);
      const problems = checkErrorDoc(edited, catalog, declared);
      if (m.name === 'no table') {
        // Without the table every code is also missing.
        assert.equal(problems[0], m.problems[0]);
        assert.equal(problems.length, 1 + Object.keys(catalog).length, m.name);
      } else {
        assert.deepEqual(problems, m.problems, m.name);
      }
    }
  });

  it('the check fails when an operation declares a code the page does not know', () => {
    const extra = new Map(declared);
    extra.set('pet_not_found', [...(extra.get('pet_not_found') ?? []), 'listPets']);
    extra.set('coffee_required', ['placeOrder']);
    assert.deepEqual(checkErrorDoc(markdown, catalog, extra), [
      'pet_not_found: docs/errors.md lists [deletePet, getPet, updatePet], the operations declare [deletePet, getPet, listPets, updatePet]',
      'coffee_required is declared by placeOrder but not in the catalog',
    ]);
  });
});
