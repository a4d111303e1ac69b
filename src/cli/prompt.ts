import { createInterface } from 'node:readline/promises';
import type { Call } from './command.ts';
import { CliError, EXIT } from './errors.ts';
import type { CliIo } from './io.ts';

/** The user pressed Ctrl-C or Ctrl-D at a prompt: exit 130 like an interrupted shell command. */
export class Interrupted extends CliError {
  constructor() {
    super('Interrupted.', EXIT.interrupted);
  }
}

/** Prompts are shown on stderr, so stdout carries only results. */
export async function ask(io: CliIo, question: string): Promise<string> {
  const rl = createInterface({ input: io.stdin, output: io.stderr as NodeJS.WritableStream, terminal: true });
  let onClose = () => {};
  try {
    const interrupted = new Promise<never>((_resolve, reject) => {
      onClose = () => reject(new Interrupted());
      rl.once('SIGINT', onClose);
      rl.once('close', onClose);
    });
    return (await Promise.race([rl.question(question), interrupted])).trim();
  } finally {
    // Only our listener: readline's own 'close' listener detaches it from the terminal.
    rl.off('close', onClose);
    rl.close();
  }
}

/** Reads a line without echoing it (a password), from a terminal in raw mode. */
export async function askHidden(io: CliIo, question: string): Promise<string> {
  const { stdin, stderr } = io;
  // Echo off before the prompt shows: a fast typist (or a script) must not see the password.
  stdin.setRawMode?.(true);
  stderr.write(question);
  stdin.setEncoding('utf8');
  stdin.resume();
  try {
    return await new Promise<string>((resolve, reject) => {
      let value = '';
      const onData = (chunk: string | Buffer) => {
        for (const ch of String(chunk)) {
          if (ch === '\r' || ch === '\n') {
            stdin.off('data', onData);
            return resolve(value);
          }
          if (ch === '\u0003' || (ch === '\u0004' && value === '')) {
            stdin.off('data', onData);
            return reject(new Interrupted());
          }
          if (ch === '\u007f' || ch === '\b') value = [...value].slice(0, -1).join('');
          else if (ch === '\u0015') value = '';
          else if (ch >= ' ') value += ch;
        }
      };
      stdin.on('data', onData);
    });
  } finally {
    stdin.setRawMode?.(false);
    stdin.pause();
    stderr.write('\n');
  }
}

export async function confirm(io: CliIo, question: string): Promise<boolean> {
  const answer = await ask(io, `${question} [y/N] `);
  return /^y(es)?$/i.test(answer);
}

/** The option of a command that asks before it destroys. */
export const YES_OPTION = {
  yes: { type: 'boolean', short: 'y', description: 'Do not ask for confirmation' },
} as const;

/**
 * Whether a command that destroys may go on: with --yes, or when a person answers yes on a
 * terminal. Without either a terminal or --yes it is a usage error (`unattended` says what is at
 * stake); an answer other than yes prints `declined` and answers false. `question` is asked only
 * on a terminal (it may need a request to say what would go).
 */
export async function confirmed(
  call: Call,
  words: { unattended: string; question: () => string | Promise<string>; declined: string },
): Promise<boolean> {
  if (call.flag('yes')) return true;
  if (call.io.stdin.isTTY !== true) throw call.usage(words.unattended);
  if (await confirm(call.io, await words.question())) return true;
  call.out.note(words.declined);
  return false;
}

/** All of stdin as text (for --password-stdin, or a FILE given as `-`). */
export async function readStdin(io: CliIo): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}
