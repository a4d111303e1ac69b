import type { ApiClient } from './api-client.ts';
import type { UsageError } from './errors.ts';
import type { CliIo } from './io.ts';
import type { Output } from './output.ts';
import type { Progress } from './progress.ts';
import type { Target } from './session.ts';

/** One option of a command, as `node:util` parseArgs takes it plus what --help shows. */
export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  /** The value's placeholder in help: `--timeout DURATION`. */
  readonly value?: string;
  readonly description: string;
  readonly required?: boolean;
}

/** What a command is given when it runs. */
export interface Call {
  /** The positional arguments by name (`call.args.SLUG`). */
  readonly args: Readonly<Record<string, string>>;
  readonly io: CliIo;
  readonly out: Output;
  readonly progress: Progress;
  readonly target: Target;
  /** The value of a string option, if given. */
  string(name: string): string | undefined;
  /** Whether a boolean option was given. */
  flag(name: string): boolean;
  /** A client with the token; throws "not signed in" (exit 3) when there is none. */
  api(): ApiClient;
  /** A client without credentials (sign in). */
  anonymous(): ApiClient;
  /** A usage error for this command (exit 2). */
  usage(message: string): UsageError;
}

export interface CommandSpec {
  /** The words that select it: `login`, `domains verify`. */
  readonly name: string;
  readonly summary: string;
  /** Required positional arguments, in order: `['SLUG', 'HOSTNAME']`. */
  readonly args?: readonly string[];
  /** Positional arguments after `args` that may be left out (absent from `call.args` then). */
  readonly optionalArgs?: readonly string[];
  readonly options?: Readonly<Record<string, OptionSpec>>;
  /** Paragraphs for --help. */
  readonly description?: string;
  readonly examples?: readonly string[];
  /** Returns the exit code (0 when nothing is returned). */
  run(call: Call): Promise<number | undefined>;
}

/** A command with subcommands: `kennel domains add|list|…`. */
export interface GroupSpec {
  readonly name: string;
  readonly summary: string;
  readonly description?: string;
  readonly commands: readonly CommandSpec[];
}

export function defineCommand(spec: CommandSpec): CommandSpec {
  return spec;
}

/** A positive integer argument (a team id), or a usage error. */
export function positiveInteger(call: Call, name: string, value: string): number {
  if (!/^[1-9]\d{0,14}$/.test(value))
    throw call.usage(`${name} must be a positive whole number (got "${value}").`);
  return Number(value);
}

/** The positional argument `name` as a positive integer (a team id), or a usage error. */
export function idArg(call: Call, name: string): number {
  return positiveInteger(call, name, call.args[name] ?? '');
}

/**
 * A command that acts on one thing its first arguments name (a team, a project, a domain): `args`
 * lists only the arguments after those, and `run` gets the thing, read and checked once.
 */
export type ScopedSpec<T> = Omit<CommandSpec, 'run'> & {
  run(call: Call, scope: T): Promise<number | undefined>;
};

/** Declares the commands on one kind of thing: named by the arguments `lead`, read by `read`. */
export function scopedCommand<T>(lead: readonly string[], read: (call: Call) => T) {
  return (spec: ScopedSpec<T>): CommandSpec =>
    defineCommand({
      ...spec,
      args: [...lead, ...(spec.args ?? [])],
      run: async (call) => spec.run(call, read(call)),
    });
}

/** A command on one team: TEAM_ID comes first; `run` gets it as a number (a usage error otherwise). */
export const teamCommand = scopedCommand(['TEAM_ID'], (call) => idArg(call, 'TEAM_ID'));

/** A command on one project: SLUG comes first; `run` gets it. */
export const projectCommand = scopedCommand(['SLUG'], (call) => call.args.SLUG ?? '');
