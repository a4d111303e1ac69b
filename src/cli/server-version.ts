import type { CliIo } from './io.ts';

/** Where every platform serves its CLI (src/platform/cli-package/serve-cli-package.ts). */
const CLI_PACKAGE_PATH = '/cli/kennel-cli.tgz';

/** `1.10.0` vs `1.9.2` by number; a part that is not a number (a pre-release) counts as 0. */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string) =>
    v
      .split(/[.+-]/)
      .slice(0, 3)
      .map((p) => Number.parseInt(p, 10) || 0);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

/**
 * What the API client calls with each answer's X-Kennel-Version: a server newer than the one this
 * CLI was made for gets one line on stderr per command (stdout stays the command's, --json too),
 * with the line that installs the server's own CLI.
 */
export function newerServerNotice(io: CliIo, madeFor: string): (version: string, server: string) => void {
  let told = false;
  return (version, server) => {
    if (told || compareVersions(version, madeFor) <= 0) return;
    told = true;
    io.stderr.write(
      `notice: the Kennel server at ${server} runs ${version}; this kennel CLI was made for ${madeFor}. Update it: npm install -g ${server}${CLI_PACKAGE_PATH}\n`,
    );
  };
}
