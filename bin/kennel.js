#!/usr/bin/env node
// The `kennel` command. The CLI is TypeScript run directly by Node 24 (type stripping), so an older
// Node stops here with a hint instead of a syntax error.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(
    'kennel needs Node.js 24: run it through npx kennel or npm exec from the project, which bring Node 24\n',
  );
  process.exit(1);
}
const { main } = await import('../src/cli/main.ts');
await main();
