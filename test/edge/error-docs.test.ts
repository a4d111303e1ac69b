import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { edgeErrors } from '../../src/edge/index.ts';

describe("docs/operations.md: the edge's own answers", () => {
  it('lists every code of the edge catalog with its status and meaning, and nothing else', () => {
    const markdown = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
    const section = markdown.slice(markdown.indexOf('## What the edge answers itself'));
    const rows = [...section.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \| (.+) \|$/gm)].map((m) => [
      m[1],
      Number(m[2]),
      m[3],
    ]);
    assert.deepEqual(
      rows,
      Object.entries(edgeErrors.specs).map(([code, spec]) => [code, spec.status, spec.meaning]),
    );
  });
});
