import type { Call } from './command.ts';
import { askHidden, readStdin } from './prompt.ts';

/**
 * The passwords a command needs, in order: from stdin with --password-stdin (one a line, for
 * scripts), else asked for on the terminal without echo.
 */
export async function passwords(call: Call, prompts: readonly string[]): Promise<string[]> {
  if (call.flag('password-stdin')) {
    const lines = (await readStdin(call.io)).split(/\r?\n/);
    const given = lines.slice(0, prompts.length);
    if (given.length < prompts.length || given.some((p) => p === '')) {
      throw call.usage(
        `--password-stdin needs ${prompts.length === 1 ? 'the password' : `${prompts.length} lines: ${prompts.join(', ')}`}.`,
      );
    }
    return given;
  }
  if (call.io.stdin.isTTY !== true) {
    throw call.usage('stdin is not a terminal: pipe the password in with --password-stdin.');
  }
  const answers: string[] = [];
  for (const prompt of prompts) answers.push(await askHidden(call.io, `${prompt}: `));
  return answers;
}

export const PASSWORD_STDIN = {
  'password-stdin': {
    type: 'boolean' as const,
    description: 'Read the password(s) from stdin, one a line (the way to run this off a terminal)',
  },
};
