/**
 * Builds the `kennel` CLI as an npm package the platform serves (docs/cli.md, "Install"): the CLI's
 * TypeScript (src/cli and the src/lib files it reaches) turned into JavaScript, because Node will
 * not strip types inside node_modules, with its few npm dependencies bundled in the tarball so that
 * `npm install -g <url>` needs nothing but the platform. The sources are read as files, never
 * imported: the platform does not depend on the CLI (test/cli/layering.test.ts).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';

/** The package's name: scoped, so it never resolves to the unrelated `kennel` on npm. */
export const CLI_PACKAGE_NAME = '@kennel-platform/cli';
/** The oldest Node the emitted JavaScript runs on (test/cli/install.test.ts runs it on Node 20). */
export const CLI_MIN_NODE = 20;
const ENTRY = 'src/cli/main.ts';

export interface CliPackageOptions {
  /** The checkout holding src/, package.json and node_modules/. */
  readonly root: string;
  /** Where the tarball is written (the data directory's cli/). */
  readonly outDir: string;
  /** The Kennel server version the CLI is made for (and its own version). */
  readonly version: string;
}

export interface CliPackage {
  readonly version: string;
  /** `kennel-cli-<version>.tgz`. */
  readonly fileName: string;
  readonly body: Buffer;
  /** A strong ETag: the tarball's SHA-256. */
  readonly etag: string;
}

/** Relative specifiers of static imports, re-exports and dynamic imports of JavaScript text. */
const SPECIFIER =
  /(\b(?:import|export)\s+(?:[^'";]*?\s+from\s+)?|\bimport\(\s*)(['"])(\.{1,2}\/[^'"]+)\.ts\2/g;

/** The project files reached from the entry through runtime imports, JavaScript by file. */
function emitSources(root: string): Map<string, string> {
  const emitted = new Map<string, string>();
  const queue = [resolve(root, ENTRY)];
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    const name = relative(root, file);
    if (emitted.has(name)) continue;
    // Type-only imports are gone once stripped: what is left is what runs.
    const js = stripTypeScriptTypes(readFileSync(file, 'utf8'), { mode: 'strip' }).replace(
      SPECIFIER,
      (_m, head: string, quote: string, path: string) => {
        queue.push(resolve(dirname(file), `${path}.ts`));
        return `${head}${quote}${path}.js${quote}`;
      },
    );
    emitted.set(name.replace(/\.ts$/, '.js'), js);
  }
  return emitted;
}

/** Bare specifiers the emitted files import (`yaml`, `@scope/name/sub` → `@scope/name`). */
function bareImports(files: Map<string, string>): Set<string> {
  const names = new Set<string>();
  for (const js of files.values()) {
    for (const m of js.matchAll(/\b(?:from\s+|import\(\s*|import\s+)['"]([^'".][^'"]*)['"]/g)) {
      const spec = m[1] ?? '';
      if (spec.startsWith('node:')) continue;
      names.add(
        spec
          .split('/')
          .slice(0, spec.startsWith('@') ? 2 : 1)
          .join('/'),
      );
    }
  }
  return names;
}

interface Manifest {
  version: string;
  dependencies?: Record<string, string>;
}

/**
 * The installed packages `direct` needs, with their dependencies, as node_modules holds them
 * (hoisted; a package's own nested node_modules is copied with it).
 */
function dependencyClosure(root: string, direct: Iterable<string>): Map<string, Manifest> {
  const found = new Map<string, Manifest>();
  const queue = [...direct];
  for (let name = queue.pop(); name !== undefined; name = queue.pop()) {
    if (found.has(name)) continue;
    const dir = join(root, 'node_modules', name);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
    found.set(name, manifest);
    for (const dep of Object.keys(manifest.dependencies ?? {})) {
      if (!existsSync(join(dir, 'node_modules', dep))) queue.push(dep);
    }
  }
  return found;
}

/** The command: stops on a Node too old for the emitted JavaScript, else runs the CLI. */
const BIN = `#!/usr/bin/env node
const major = Number(process.versions.node.split('.')[0]);
if (major < ${CLI_MIN_NODE}) {
  process.stderr.write('kennel needs Node.js ${CLI_MIN_NODE} or later (this is ' + process.version + ')\\n');
  process.exit(1);
}
const { main } = await import('../src/cli/main.js');
await main();
`;

/** Builds the tarball into `outDir` with `npm pack` and returns it. */
export async function buildCliPackage(options: CliPackageOptions): Promise<CliPackage> {
  const { root, outDir, version } = options;
  mkdirSync(outDir, { recursive: true });
  const staging = mkdtempSync(join(outDir, 'build-'));
  try {
    const files = emitSources(root);
    for (const [name, js] of files) {
      mkdirSync(dirname(join(staging, name)), { recursive: true });
      writeFileSync(join(staging, name), js);
    }
    mkdirSync(join(staging, 'bin'));
    writeFileSync(join(staging, 'bin', 'kennel.js'), BIN, { mode: 0o755 });
    const direct = [...bareImports(files)].sort();
    const closure = dependencyClosure(root, direct);
    for (const name of closure.keys()) {
      cpSync(join(root, 'node_modules', name), join(staging, 'node_modules', name), { recursive: true });
    }
    const platform = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { license?: string };
    const manifest = {
      name: CLI_PACKAGE_NAME,
      version,
      description: `The kennel command-line interface, made for Kennel server ${version}`,
      license: platform.license,
      type: 'module',
      bin: { kennel: 'bin/kennel.js' },
      engines: { node: `>=${CLI_MIN_NODE}` },
      kennelServerVersion: version,
      // Pinned to what the platform runs, and bundled: installing needs no registry.
      dependencies: Object.fromEntries(direct.map((name) => [name, closure.get(name)?.version])),
      bundleDependencies: direct,
    };
    writeFileSync(join(staging, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    writeFileSync(
      join(staging, 'README.md'),
      `# kennel\n\nThe Kennel CLI, made for Kennel server ${version}. Run \`kennel --help\`.\n`,
    );
    const { stdout } = await promisify(execFile)(
      'npm',
      ['pack', '--json', '--ignore-scripts', '--pack-destination', outDir],
      {
        cwd: staging,
        env: { ...process.env, npm_config_loglevel: 'error', npm_config_update_notifier: 'false' },
      },
    );
    const packed = (JSON.parse(stdout) as { filename: string }[])[0]?.filename ?? '';
    const fileName = `kennel-cli-${version}.tgz`;
    renameSync(join(outDir, packed), join(outDir, fileName));
    const body = readFileSync(join(outDir, fileName));
    const etag = `"${createHash('sha256').update(body).digest('base64url')}"`;
    return { version, fileName, body, etag };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
