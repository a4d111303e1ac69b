import { readFile } from 'node:fs/promises';
import { CliError, EXIT } from './errors.ts';
import type { CliIo } from './io.ts';
import { readStdin } from './prompt.ts';

/** The text of FILE, or of stdin when FILE is `-`. A file that cannot be read fails the action (1). */
export async function readTextFile(io: CliIo, file: string): Promise<string> {
  if (file === '-') return readStdin(io);
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'it is a directory'
          : code === 'EACCES'
            ? 'permission denied'
            : (error as Error).message;
    throw new CliError(`Cannot read ${file}: ${why}.`, EXIT.failed, 'file_unreadable');
  }
}
