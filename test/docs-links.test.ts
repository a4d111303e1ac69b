/**
 * Every document a source file or a document names exists: `docs/….md` paths in src/, test/,
 * bench/, scripts/, docs/ and the README (with their `#anchor`, and the section they quote as
 * `docs/<name>.md, "Section"`), and every relative Markdown link of docs/ and the README.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

const ROOT = join(import.meta.dirname, '..');
const SCANNED = ['src', 'test', 'bench', 'scripts', 'docs'];
const TEXT = /\.(ts|js|md|css|html|json|yaml)$/;

/** The text files under a folder of the repository, leaving out installed packages. */
function files(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : files(path);
    return entry.isFile() && TEXT.test(entry.name) ? [join(ROOT, path)] : [];
  });
}

const ALL = [...SCANNED.flatMap(files), join(ROOT, 'README.md')];
const MARKDOWN = ALL.filter((f) => f.endsWith('.md'));
const read = (file: string) => readFileSync(file, 'utf8');
const where = (file: string, text: string, index: number) =>
  `${relative(ROOT, file)}:${text.slice(0, index).split('\n').length}`;

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(file: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of read(file).split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = (heading[1] ?? '')
      .toLowerCase()
      .replace(/<[^>]+>/g, '')
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    found.add(count === 0 ? slug : `${slug}-${count}`);
  }
  for (const m of read(file).matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(m[1] ?? '');
  return found;
}

/** The words of a text, without Markdown emphasis or comment leaders, for "is this quoted there". */
const words = (text: string) =>
  text
    .replace(/\n\s*(\*|\/\/|#)?\s*/g, ' ')
    .replace(/[*`_]/g, '')
    .replace(/\s+/g, ' ')
    .toLowerCase()
    .trim();

function problemsOf(file: string, text: string, target: string, anchor: string | undefined, at: number) {
  const problems: string[] = [];
  if (!existsSync(target)) {
    problems.push(`${where(file, text, at)} names ${relative(ROOT, target)}, which does not exist`);
  } else if (anchor && target.endsWith('.md') && !anchors(target).has(anchor)) {
    problems.push(`${where(file, text, at)} names ${relative(ROOT, target)}#${anchor}: no such heading`);
  }
  return problems;
}

describe('documents named in the sources exist', () => {
  it('finds the references', () => {
    const count = ALL.reduce((n, f) => n + [...read(f).matchAll(/docs\/[\w./-]+\.md/g)].length, 0);
    assert.ok(count > 50, `docs/….md references were found (${count})`);
  });

  it('every docs/….md path (and its #anchor) names a file (and a heading) that exists', () => {
    const problems = ALL.flatMap((file) => {
      const text = read(file);
      return [...text.matchAll(/(?<![\w/.-])docs\/([\w./-]+\.md)(?:#([\w-]+))?/g)].flatMap((m) =>
        problemsOf(file, text, join(ROOT, 'docs', m[1] ?? ''), m[2], m.index),
      );
    });
    assert.deepEqual(problems, []);
  });

  it('every relative Markdown link of docs/ and the README resolves (with its #anchor)', () => {
    const problems = MARKDOWN.flatMap((file) => {
      const text = read(file);
      return [...text.matchAll(/\]\(([^)\s:#]*)(?:#([^)\s]+))?\)/g)].flatMap((m) => {
        const path = m[1] ?? '';
        const target = path === '' ? file : resolve(dirname(file), path);
        return problemsOf(file, text, target, m[2], m.index);
      });
    });
    assert.deepEqual(problems, []);
  });

  it('a section quoted beside a document\'s name (docs/<name>.md, "Section") is in that document', () => {
    const problems = ALL.flatMap((file) => {
      const text = read(file);
      return [...text.matchAll(/(?<![\w/.-])docs\/([\w./-]+\.md)(?:#[\w-]+)?\)?,\s*"([^"]+)"/g)].flatMap(
        (m) => {
          const target = join(ROOT, 'docs', m[1] ?? '');
          if (!existsSync(target)) return [];
          return words(read(target)).includes(words(m[2] ?? ''))
            ? []
            : [`${where(file, text, m.index)} quotes "${m[2]}" from docs/${m[1]}, which does not say it`];
        },
      );
    });
    assert.deepEqual(problems, []);
  });
});
