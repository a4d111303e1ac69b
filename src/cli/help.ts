import type { CommandSpec, GroupSpec, OptionSpec } from './command.ts';
import { formatTable } from './output.ts';
import { allCommands, COMMANDS } from './registry.ts';

/** The options every command takes. */
export const GLOBAL_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  server: {
    type: 'string',
    value: 'ADDRESS',
    description:
      'The Kennel server: a URL, or host:port (http for localhost, https otherwise); else KENNEL_URL, else the saved one, else http://localhost:8080',
  },
  json: { type: 'boolean', description: "Print the API's JSON answer on stdout, and nothing else" },
  help: { type: 'boolean', short: 'h', description: 'Show help for the command' },
};

export const EXIT_CODES_HELP = `Exit codes:
  0    success
  1    the action failed: an API error (4xx other than 401), a failed deploy, a verification that did not pass
  2    usage error: unknown command or option, missing argument
  3    not signed in, or the token or password was rejected (401)
  4    server unreachable, no answer in time, or a server error (5xx)
  130  interrupted at a prompt`;

const WIDTH = 100;

/** Wraps paragraphs to the width; lines that start with spaces (examples, YAML) are kept as they are. */
function wrap(text: string, indent = ''): string {
  return text
    .split('\n')
    .map((line) => {
      if (line.startsWith(' ') || line.length + indent.length <= WIDTH) return indent + line;
      const out: string[] = [];
      let current = '';
      for (const word of line.split(' ')) {
        if (current && indent.length + current.length + 1 + word.length > WIDTH) {
          out.push(indent + current);
          current = word;
        } else current = current ? `${current} ${word}` : word;
      }
      if (current) out.push(indent + current);
      return out.join('\n');
    })
    .join('\n');
}

function optionLabel(name: string, spec: OptionSpec): string {
  const long = `--${name}${spec.type === 'string' ? ` ${spec.value ?? 'VALUE'}` : ''}`;
  return spec.short ? `-${spec.short}, ${long}` : long;
}

function optionRows(options: Readonly<Record<string, OptionSpec>>): string {
  return formatTable(
    ['', ''],
    Object.entries(options).map(([name, spec]) => [optionLabel(name, spec), spec.description]),
    '  ',
  )
    .split('\n')
    .slice(1)
    .join('\n');
}

/** `kennel projects create --team ID … [options]`. */
export function usageLine(command: CommandSpec): string {
  const required = Object.entries(command.options ?? {})
    .filter(([, spec]) => spec.required)
    .map(([name, spec]) => `--${name} ${spec.value ?? 'VALUE'}`);
  const optional = (command.optionalArgs ?? []).map((name) => `[${name}]`);
  return ['kennel', command.name, ...(command.args ?? []), ...optional, ...required, '[options]'].join(' ');
}

function rows(entries: readonly [string, string][]): string {
  return formatTable(['', ''], entries, '  ').split('\n').slice(1).join('\n');
}

export function commandHelp(command: CommandSpec): string {
  const parts = [command.summary, `Usage:\n  ${usageLine(command)}`];
  if (command.description) parts.push(wrap(command.description));
  if (command.options && Object.keys(command.options).length > 0) {
    parts.push(`Options:\n${optionRows(command.options)}`);
  }
  parts.push(`Global options:\n${optionRows(GLOBAL_OPTIONS)}`);
  if (command.examples?.length) parts.push(`Examples:\n${command.examples.map((e) => `  ${e}`).join('\n')}`);
  return `${parts.join('\n\n')}\n`;
}

export function groupHelp(group: GroupSpec): string {
  const parts = [group.summary, `Usage:\n  kennel ${group.name} <command> [arguments] [options]`];
  if (group.description) parts.push(wrap(group.description));
  parts.push(
    `Commands:\n${rows(group.commands.map((c) => [[c.name, ...(c.args ?? [])].join(' '), c.summary]))}`,
    `Global options:\n${optionRows(GLOBAL_OPTIONS)}`,
    `Run 'kennel ${group.name} <command> --help' for a command's options and examples.`,
  );
  return `${parts.join('\n\n')}\n`;
}

export function mainHelp(version: string): string {
  const commands = allCommands().map((c): [string, string] => [
    [c.name, ...(c.args ?? []), ...(c.optionalArgs ?? []).map((name) => `[${name}]`)].join(' '),
    c.summary,
  ]);
  return `kennel ${version}: projects, deploys and custom domains of a Kennel platform, from the command line

Usage:
  kennel <command> [arguments] [options]
  kennel help <command>

Commands:
${rows(commands)}

Global options:
${optionRows({ ...GLOBAL_OPTIONS, version: { type: 'boolean', description: 'Print the version' } })}

Environment:
${rows([
  ['KENNEL_URL', 'The server, when --server is not given'],
  ['KENNEL_TOKEN', 'An API token to use instead of the saved one (CI)'],
  ['KENNEL_CONFIG_DIR', 'Where credentials.json is kept (default ~/.config/kennel)'],
])}

${EXIT_CODES_HELP}

Run 'kennel <command> --help' for a command's options and examples. Documentation: docs/cli.md.
`;
}

/** The names of the commands and groups, for "did you mean". */
export function topNames(): string[] {
  return COMMANDS.map((c) => c.name);
}
