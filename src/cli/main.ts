import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ApiClient } from './api-client.ts';
import type { Call, CommandSpec, GroupSpec, OptionSpec } from './command.ts';
import { ApiFailure, CliError, EXIT, UsageError } from './errors.ts';
import { commandHelp, GLOBAL_OPTIONS, groupHelp, mainHelp, usageLine } from './help.ts';
import { type CliIo, processIo } from './io.ts';
import { nextStepFor } from './next-steps.ts';
import { Output } from './output.ts';
import { Progress } from './progress.ts';
import { allCommands, COMMANDS, isGroup } from './registry.ts';
import { newerServerNotice } from './server-version.ts';
import { resolveTarget, signedInClient } from './session.ts';
import { closest } from './suggest.ts';

const MANIFEST = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
  /** Set in the package the platform serves (src/platform/cli-package/); the checkout's is its own. */
  kennelServerVersion?: string;
};
export const VERSION = MANIFEST.version;
/** The Kennel server version this CLI was made for. */
export const SERVER_VERSION = MANIFEST.kennelServerVersion ?? VERSION;
const USER_AGENT = `kennel-cli/${VERSION} node/${process.versions.node}`;

type ParseOptions = Record<string, { type: 'string' | 'boolean'; short?: string }>;

function parseOptions(specs: Readonly<Record<string, OptionSpec>>): ParseOptions {
  return Object.fromEntries(
    Object.entries(specs).map(([name, s]) => [
      name,
      s.short ? { type: s.type, short: s.short } : { type: s.type },
    ]),
  );
}

/** Every option of every command: the first pass finds the command words with it. */
function everyOption(): ParseOptions {
  const all: ParseOptions = {
    ...parseOptions(GLOBAL_OPTIONS),
    version: { type: 'boolean' },
  };
  for (const command of allCommands()) Object.assign(all, parseOptions(command.options ?? {}));
  return all;
}

function unknown(what: string, word: string, names: readonly string[], within?: string): UsageError {
  const guess = closest(word, names);
  return new UsageError(`unknown ${what} "${word}"${guess ? `; did you mean "${guess}"?` : '.'}`, within);
}

/**
 * An unknown first word: a near top-level name (`domian` → `domains`), else a group's command
 * typed without its group (`verify` → `domains verify`).
 */
function unknownTop(word: string): UsageError {
  const guess = closest(
    word,
    COMMANDS.map((c) => c.name),
  );
  if (guess) return new UsageError(`unknown command "${word}"; did you mean "kennel ${guess}"?`);
  const groups = COMMANDS.filter(isGroup).filter((g) =>
    g.commands.some((c) => c.name === `${g.name} ${word.toLowerCase()}`),
  );
  if (groups.length === 0) return new UsageError(`unknown command "${word}".`);
  const group = groups.length === 1 ? groups[0]?.name : `<${groups.map((g) => g.name).join('|')}>`;
  return new UsageError(`unknown command "${word}"; did you mean "kennel ${group} ${word.toLowerCase()}"?`);
}

interface Resolved {
  readonly entry: CommandSpec | GroupSpec | undefined;
  /** Indexes of argv holding the command words. */
  readonly consumed: readonly number[];
}

/** Finds the command (or group) named by the first positional words. */
function resolve(words: readonly { value: string; index: number }[]): Resolved {
  const [first, second] = words;
  if (first === undefined) return { entry: undefined, consumed: [] };
  const top = COMMANDS.find((c) => c.name === first.value);
  if (top === undefined) throw unknownTop(first.value);
  if (!isGroup(top)) return { entry: top, consumed: [first.index] };
  if (second === undefined) return { entry: top, consumed: [first.index] };
  const sub = top.commands.find((c) => c.name === `${top.name} ${second.value}`);
  if (sub === undefined) {
    const guess = closest(
      second.value,
      top.commands.map((c) => c.name.slice(top.name.length + 1)),
    );
    throw new UsageError(
      `unknown ${top.name} command "${second.value}"${guess ? `; did you mean "kennel ${top.name} ${guess}"?` : '.'}`,
      top.name,
    );
  }
  return { entry: sub, consumed: [first.index, second.index] };
}

/** The words of `argv` that are not options, with their positions. */
function positionalWords(argv: readonly string[]): { value: string; index: number }[] {
  const { tokens } = parseArgs({
    args: [...argv],
    options: everyOption(),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  return tokens.flatMap((t) => (t.kind === 'positional' ? [{ value: t.value, index: t.index }] : []));
}

/** The first option in `argv` that neither the global options nor any command knows, as a usage error. */
function unknownOption(argv: readonly string[]): UsageError | undefined {
  const known = everyOption();
  const names = Object.keys(known).map((n) => `--${n}`);
  const shorts = new Set(Object.values(known).flatMap((o) => (o.short ? [`-${o.short}`] : [])));
  for (const arg of argv) {
    if (arg === '--') break;
    if (!arg.startsWith('-') || arg === '-') continue;
    const name = arg.split('=')[0] as string;
    if (names.includes(name) || shorts.has(name)) continue;
    return unknown('option', name, names);
  }
  return undefined;
}

/** parseArgs' messages, shortened to what a person needs. */
function usageFromParseError(error: unknown, command: CommandSpec): UsageError {
  const e = error as Error & { code?: string };
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const option = /'([^']+)'/.exec(e.message)?.[1] ?? e.message;
    const names = Object.keys({ ...GLOBAL_OPTIONS, ...command.options }).map((n) => `--${n}`);
    return unknown(`option for kennel ${command.name}:`, option, names, command.name);
  }
  if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const option = /'(-[^ ']+)/.exec(e.message)?.[1];
    return new UsageError(option ? `${option} needs a value.` : e.message, command.name);
  }
  return new UsageError(e.message, command.name);
}

async function dispatch(argv: readonly string[], io: CliIo): Promise<number> {
  const words = positionalWords(argv);
  const wantsHelp = argv.some((a) => a === '--help' || a === '-h');
  if (words[0]?.value === 'help') {
    const { entry } = resolve(words.slice(1));
    io.stdout.write(
      entry === undefined ? mainHelp(VERSION) : isGroup(entry) ? groupHelp(entry) : commandHelp(entry),
    );
    return EXIT.ok;
  }
  if (words.length === 0 && argv.includes('--version')) {
    io.stdout.write(`kennel ${VERSION} (made for Kennel server ${SERVER_VERSION})\n`);
    return EXIT.ok;
  }
  const { entry, consumed } = resolve(words);
  if (entry === undefined) {
    if (wantsHelp) {
      io.stdout.write(mainHelp(VERSION));
      return EXIT.ok;
    }
    // An option that no command has is named, not buried under the whole help.
    const stray = unknownOption(argv);
    if (stray) throw stray;
    io.stderr.write(mainHelp(VERSION));
    throw new UsageError('no command given.');
  }
  if (isGroup(entry)) {
    if (wantsHelp) {
      io.stdout.write(groupHelp(entry));
      return EXIT.ok;
    }
    io.stderr.write(groupHelp(entry));
    throw new UsageError(
      `kennel ${entry.name} needs a command (${entry.commands.map((c) => c.name.split(' ')[1]).join(', ')}).`,
    );
  }
  const command = entry;
  if (wantsHelp) {
    io.stdout.write(commandHelp(command));
    return EXIT.ok;
  }

  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv.filter((_, i) => !consumed.includes(i)),
      options: parseOptions({ ...GLOBAL_OPTIONS, ...command.options }),
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    throw usageFromParseError(error, command);
  }
  const { values, positionals } = parsed;
  const names = command.args ?? [];
  if (positionals.length < names.length) {
    throw new UsageError(`missing ${names.slice(positionals.length).join(' and ')}.`, command.name);
  }
  const optional = command.optionalArgs ?? [];
  if (positionals.length > names.length + optional.length) {
    throw new UsageError(
      `unexpected argument "${positionals[names.length + optional.length]}".`,
      command.name,
    );
  }
  for (const [name, spec] of Object.entries(command.options ?? {})) {
    if (spec.required && values[name] === undefined) {
      throw new UsageError(`--${name} ${spec.value ?? 'VALUE'} is required.`, command.name);
    }
  }

  const target = await resolveTarget(values.server as string | undefined, io.env);
  const out = new Output(io, values.json === true);
  const onServerVersion = newerServerNotice(io, SERVER_VERSION);
  const call: Call = {
    args: Object.fromEntries([
      ...names.map((name, i) => [name, positionals[i] ?? '']),
      ...optional.flatMap((name, i) => {
        const value = positionals[names.length + i];
        return value === undefined ? [] : [[name, value]];
      }),
    ]),
    io,
    out,
    progress: new Progress(io.stderr),
    target,
    string: (name) => {
      const value = values[name];
      return typeof value === 'string' ? value : undefined;
    },
    flag: (name) => values[name] === true,
    api: () => signedInClient(target, io.env, USER_AGENT, onServerVersion),
    anonymous: () => new ApiClient({ server: target.server, userAgent: USER_AGENT, onServerVersion }),
    usage: (message) => new UsageError(message, command.name),
  };
  try {
    return (await command.run(call)) ?? EXIT.ok;
  } catch (error) {
    if (error instanceof ApiFailure && error.next === undefined) {
      const next = nextStepFor(error.body, call.args);
      if (next) throw new ApiFailure(error.body, next);
    }
    throw error;
  }
}

/** Prints a failure once, on stderr (and the API's error body on stdout with --json). */
function report(error: unknown, io: CliIo, json: boolean): number {
  if (!(error instanceof CliError)) {
    io.stderr.write(`error: unexpected failure: ${(error as Error)?.stack ?? String(error)}\n`);
    return EXIT.failed;
  }
  const [first = '', ...rest] = error.message.split('\n');
  const code = error.code ? ` (${error.code})` : '';
  io.stderr.write(`error: ${first}${code}\n${rest.map((line) => `  ${line}\n`).join('')}`);
  if (error instanceof ApiFailure && error.next) io.stderr.write(`  Next: ${error.next}\n`);
  if (error instanceof UsageError) {
    const command = error.command ? allCommands().find((c) => c.name === error.command) : undefined;
    if (command) io.stderr.write(`usage: ${usageLine(command)}\n`);
    io.stderr.write(`Run 'kennel ${error.command ? `${error.command} ` : ''}--help' for help.\n`);
  }
  if (json && error instanceof ApiFailure) io.stdout.write(`${JSON.stringify(error.body, null, 2)}\n`);
  return error.exitCode;
}

/** Runs one command line; returns the exit code (docs/cli.md, "Exit codes"). */
export async function run(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (error) {
    return report(error, io, argv.includes('--json'));
  }
}

/** The process entry (bin/kennel.js): exit code, Ctrl-C, a closed pipe on stdout. */
export async function main(): Promise<void> {
  process.on('SIGINT', () => {
    if (process.stderr.isTTY) process.stderr.write('\r\x1b[2K');
    process.exit(EXIT.interrupted);
  });
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok);
    throw error;
  });
  process.exitCode = await run(process.argv.slice(2));
}
