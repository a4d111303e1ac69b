import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

const SRC = join(import.meta.dirname, '..', '..', 'src');
const CLI = join(SRC, 'cli');

function sources(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f));
}

/** Every `import … from '…'` / `export … from '…'` of a file, with whether it is type-only. */
function imports(file: string): { specifier: string; typeOnly: boolean }[] {
  const text = readFileSync(file, 'utf8');
  const found: { specifier: string; typeOnly: boolean }[] = [];
  for (const m of text.matchAll(
    /(?:^|\n)\s*(?:import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/g,
  )) {
    found.push({ specifier: m[2] ?? '', typeOnly: m[1] !== undefined });
  }
  for (const m of text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
    found.push({ specifier: m[1] ?? '', typeOnly: false });
  }
  return found;
}

describe('the CLI stays at the edge of the dependency graph', () => {
  it('is imported by nothing in src/ outside src/cli', () => {
    const offenders = sources(SRC)
      .filter((file) => !file.startsWith(`${CLI}/`))
      .flatMap((file) =>
        imports(file)
          .filter(
            (i) => i.specifier.startsWith('.') && resolve(dirname(file), i.specifier).startsWith(`${CLI}/`),
          )
          .map((i) => `${relative(SRC, file)} imports ${i.specifier}`),
      );
    assert.deepEqual(offenders, []);
  });

  it('imports only node: built-ins, src/lib and itself (src/platform for types at most): it talks HTTP', () => {
    const files = sources(CLI);
    assert.ok(files.length > 10, 'the CLI sources were found');
    assert.ok(
      imports(join(CLI, 'main.ts')).some((i) => i.specifier === './registry.ts'),
      'imports are recognised',
    );
    const offenders = files.flatMap((file) =>
      imports(file)
        .filter((i) => {
          if (i.specifier.startsWith('node:')) return false;
          if (!i.specifier.startsWith('.')) return true;
          const target = resolve(dirname(file), i.specifier);
          if (target.startsWith(`${CLI}/`) || target.startsWith(join(SRC, 'lib', '/'))) return false;
          return !(i.typeOnly && target.startsWith(join(SRC, 'platform', '/')));
        })
        .map((i) => `${relative(SRC, file)} imports ${i.specifier}`),
    );
    assert.deepEqual(offenders, []);
  });
});

describe("the edge reads the platform's state through the platform's modules", () => {
  it('queries no table itself (routes, documents and certificates come from src/platform)', () => {
    const offenders = sources(join(SRC, 'edge')).filter((file) =>
      /\.(selectFrom|updateTable|insertInto|deleteFrom)\(/.test(readFileSync(file, 'utf8')),
    );
    assert.deepEqual(
      offenders.map((f) => relative(SRC, f)),
      [],
    );
  });
});

describe('modules import each other without cycles', () => {
  it('has no import cycle in src/ (type-only imports included)', () => {
    const graph = new Map<string, string[]>();
    for (const file of sources(SRC)) {
      graph.set(
        file,
        imports(file)
          .filter((i) => i.specifier.startsWith('.'))
          .map((i) => resolve(dirname(file), i.specifier)),
      );
    }
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        cycles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(SRC, f)).join(' → '));
        return;
      }
      state.set(file, 'open');
      for (const next of graph.get(file) ?? []) if (graph.has(next)) visit(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of graph.keys()) visit(file, []);
    assert.deepEqual(cycles, []);
  });
});
