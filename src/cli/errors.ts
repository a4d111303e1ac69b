/**
 * The CLI's exit codes and the failures that lead to them. Every failure is thrown as a
 * `CliError` carrying its exit code; main prints it once, as `error: <message> (<code>)`.
 */
export const EXIT = {
  /** The action succeeded. */
  ok: 0,
  /** The action failed: an API error (4xx other than 401), a failed deploy, a verification that did not pass. */
  failed: 1,
  /** The command line is wrong: unknown command or option, missing argument, no --yes off a terminal. */
  usage: 2,
  /** Not signed in, or the server rejected the credentials (401). */
  auth: 3,
  /** The server could not be reached, did not answer in time, or answered 5xx. */
  unreachable: 4,
  /** Interrupted at a prompt (Ctrl-C), as a shell reports a command killed by SIGINT. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export class CliError extends Error {
  readonly exitCode: ExitCode;
  /** A machine-readable code shown in parentheses (the API's error code when it has one). */
  readonly code: string | undefined;

  constructor(message: string, exitCode: ExitCode, code?: string) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
    this.code = code;
  }
}

/** A wrong command line; main adds the command's usage line and a pointer to --help. */
export class UsageError extends CliError {
  /** The command whose usage to show ('domains verify'), when known. */
  readonly command: string | undefined;

  constructor(message: string, command?: string) {
    super(message, EXIT.usage);
    this.name = 'UsageError';
    this.command = command;
  }
}

/** The API's Error body `{ code, message, status }`. */
export interface ApiErrorBody {
  code: string;
  message: string;
  status: number;
}

/** An error answer of the API. 401 means signed out (3), 5xx a server failure (4), others 1. */
export class ApiFailure extends CliError {
  readonly status: number;
  readonly body: ApiErrorBody;
  /** The CLI command that helps (src/cli/next-steps.ts), printed under the message. */
  readonly next: string | undefined;

  constructor(body: ApiErrorBody, next?: string) {
    super(
      body.message,
      body.status === 401 ? EXIT.auth : body.status >= 500 ? EXIT.unreachable : EXIT.failed,
      body.code,
    );
    this.name = 'ApiFailure';
    this.status = body.status;
    this.body = body;
    this.next = next;
  }
}
