import type { CliIo } from './io.ts';

export type Cell = string | number | boolean | null | undefined;

/** Display width, counting code points (hostnames may be Unicode). */
function width(text: string): number {
  return [...text].length;
}

function cell(value: Cell): string {
  if (value === null || value === undefined || value === '') return '-';
  return String(value);
}

/** Columns aligned with two spaces between them; the last column is not padded. */
export function formatTable(
  headers: readonly string[],
  rows: readonly (readonly Cell[])[],
  indent = '',
): string {
  const text = [headers.map(String), ...rows.map((row) => row.map(cell))];
  const widths = headers.map((_, i) => Math.max(...text.map((row) => width(row[i] ?? ''))));
  return text
    .map(
      (row) =>
        indent +
        row
          .map((value, i) =>
            i === row.length - 1 ? value : value + ' '.repeat((widths[i] ?? 0) - width(value)),
          )
          .join('  ')
          .trimEnd(),
    )
    .join('\n');
}

/** `key: value` lines with the values aligned. */
export function formatFields(fields: readonly (readonly [string, Cell])[], indent = ''): string {
  const longest = Math.max(...fields.map(([key]) => width(key)));
  return fields
    .map(([key, value]) => `${indent}${key}:${' '.repeat(longest - width(key) + 1)}${cell(value)}`)
    .join('\n');
}

/**
 * Everything a command prints goes through here. Results go to stdout: with --json exactly one
 * JSON document (the API's answer), otherwise text for people. Progress and prompts go to stderr.
 */
export class Output {
  readonly json: boolean;
  readonly #io: CliIo;

  constructor(io: CliIo, json: boolean) {
    this.#io = io;
    this.json = json;
  }

  /** Prints `body` as the JSON document with --json, or runs `human` to describe it. */
  result<T>(body: T, human: (body: T) => void): void {
    if (this.json) this.printJson(body);
    else human(body);
  }

  /** Prints `body` as the JSON document with --json, or one line for people. */
  resultLine<T>(body: T, text: string): void {
    this.result(body, () => this.line(text));
  }

  /**
   * A list: the JSON document with --json, else a table of a row per item, or the `empty` line
   * when there are none (the headers alone without it).
   */
  list<T>(
    items: readonly T[],
    table: { headers: readonly string[]; row: (item: T) => readonly Cell[]; empty?: string },
  ): void {
    this.result(items, () => {
      if (items.length === 0 && table.empty !== undefined) this.line(table.empty);
      else this.table(table.headers, items.map(table.row));
    });
  }

  printJson(value: unknown): void {
    this.#io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** Text exactly as given (export's YAML). */
  raw(text: string): void {
    this.#io.stdout.write(text);
  }

  line(text = ''): void {
    this.#io.stdout.write(`${text}\n`);
  }

  table(headers: readonly string[], rows: readonly (readonly Cell[])[], indent = ''): void {
    this.line(formatTable(headers, rows, indent));
  }

  fields(fields: readonly (readonly [string, Cell])[], indent = ''): void {
    this.line(formatFields(fields, indent));
  }

  /** A remark for people (never part of the result): stderr. */
  note(text: string): void {
    this.#io.stderr.write(`${text}\n`);
  }
}
