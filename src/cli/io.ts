/** What the CLI reads and writes; `processIo()` in production, the same streams in tests. */
export interface TextStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export interface InputStream extends NodeJS.ReadableStream {
  readonly isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
}

export interface CliIo {
  readonly stdout: TextStream;
  readonly stderr: TextStream;
  readonly stdin: InputStream;
  readonly env: NodeJS.ProcessEnv;
}

export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env };
}
