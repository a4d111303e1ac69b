import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { ErrorSpec } from '../../src/lib/api-error.ts';
import { managementOperations } from '../../src/platform/api/app.ts';
import { platformErrors } from '../../src/platform/errors.ts';
import { checkErrorDoc, declaredCodes, parseTable } from '../support/error-docs.ts';

describe('docs/platform-api.md', () => {
  const markdown = readFileSync(new URL('../../docs/platform-api.md', import.meta.url), 'utf8');
  const catalog = platformErrors.specs as Readonly<Record<string, ErrorSpec>>;

  it('lists every code of the management API with its status, meaning and operations, and nothing else', () => {
    assert.deepEqual(
      checkErrorDoc(markdown, catalog, declaredCodes(managementOperations()), 'docs/platform-api.md'),
      [],
    );
    assert.equal(parseTable(markdown).rows.length, Object.keys(catalog).length);
  });

  it('shows an example whose code and status agree with the catalog', () => {
    const example = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(markdown)?.[1] ?? '{}') as ErrorBodyExample;
    assert.equal(catalog[example.code]?.status, example.status);
  });
});

interface ErrorBodyExample {
  code: string;
  message: string;
  status: number;
}
