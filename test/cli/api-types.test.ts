import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  API_TYPES_FILE,
  apiTypesDrift,
  CLI_SCHEMAS,
  generateApiTypes,
} from '../../scripts/generate-api-types.ts';
import { managementDocument } from '../../src/platform/api/app.ts';
import { ROOT } from './harness.ts';

describe("the CLI's API types are generated from the management API's OpenAPI document", () => {
  it('src/cli/api-types.ts is what npm run generate:api-types writes today', () => {
    const drift = apiTypesDrift(readFileSync(API_TYPES_FILE, 'utf8'));
    assert.equal(
      drift,
      undefined,
      `src/cli/api-types.ts has drifted (${drift}): run npm run generate:api-types`,
    );
  });

  it('notices a drift, at the line where it is', () => {
    const generated = generateApiTypes();
    // What a hand edit, or a schema change the file missed, looks like.
    const edited = generated.replace('  hostname: string;\n', '  hostname?: string;\n');
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

  it('declares every schema the CLI reads, and each one with every property of the document', () => {
    const text = generateApiTypes();
    const schemas = (
      managementDocument() as { components: { schemas: Record<string, { properties?: object }> } }
    ).components.schemas;
    for (const name of CLI_SCHEMAS) {
      assert.match(text, new RegExp(`^export (interface|type) ${name}\\b`, 'm'), name);
      for (const property of Object.keys(schemas[name]?.properties ?? {})) {
        assert.match(text, new RegExp(`^ {2}${property}\\??: `, 'm'), `${name}.${property}`);
      }
    }
    // Nullable, optional and enum members keep their meaning.
    assert.match(text, /^ {2}role\?: 'owner' \| 'member' \| null;$/m);
    assert.match(text, /^ {2}status: 'unverified' \| 'verified' \| 'issuing' \| 'live' \| 'failed';$/m);
    assert.match(text, /^export interface CreatedToken extends Token \{$/m);
  });

  it('npm run generate:api-types -- --check passes on the committed file', () => {
    const out = execFileSync(process.execPath, ['scripts/generate-api-types.ts', '--check'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    assert.equal(out, '');
  });
});
