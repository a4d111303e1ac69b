import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CliError, EXIT } from './errors.ts';

/**
 * Where `kennel login` keeps the API token: `credentials.json` in `$KENNEL_CONFIG_DIR`, else
 * `$XDG_CONFIG_HOME/kennel`, else `~/.config/kennel`. The file is written with mode 0600 (its
 * directory 0700) and replaced atomically, so a crash never leaves half a token behind.
 */
export interface SavedCredentials {
  /** The server the token belongs to; it is never sent anywhere else. */
  server: string;
  email: string;
  token: string;
  /** The token's id, so that `kennel logout` can revoke it. */
  tokenId?: number;
}

export const CREDENTIALS_FILE = 'credentials.json';

export function configDir(env: NodeJS.ProcessEnv): string {
  if (env.KENNEL_CONFIG_DIR) return env.KENNEL_CONFIG_DIR;
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, 'kennel');
  return join(homedir(), '.config', 'kennel');
}

export function credentialsPath(env: NodeJS.ProcessEnv): string {
  return join(configDir(env), CREDENTIALS_FILE);
}

/** The saved credentials, or undefined when there are none. A damaged file is an error (exit 3). */
export async function readCredentials(env: NodeJS.ProcessEnv): Promise<SavedCredentials | undefined> {
  const file = credentialsPath(env);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError(
      `Cannot read ${file}: ${(error as Error).message}`,
      EXIT.auth,
      'credentials_unreadable',
    );
  }
  let value: Partial<SavedCredentials>;
  try {
    value = JSON.parse(text) as Partial<SavedCredentials>;
  } catch {
    value = {};
  }
  if (
    typeof value.server !== 'string' ||
    typeof value.token !== 'string' ||
    typeof value.email !== 'string'
  ) {
    throw new CliError(
      `${file} is damaged. Sign in again with kennel login (it replaces the file).`,
      EXIT.auth,
      'credentials_damaged',
    );
  }
  return {
    server: value.server,
    email: value.email,
    token: value.token,
    ...(typeof value.tokenId === 'number' ? { tokenId: value.tokenId } : {}),
  };
}

export async function saveCredentials(
  env: NodeJS.ProcessEnv,
  credentials: SavedCredentials,
): Promise<string> {
  const dir = configDir(env);
  const file = credentialsPath(env);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temporary = join(dir, `.${CREDENTIALS_FILE}.${process.pid}.tmp`);
  try {
    await writeFile(temporary, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600, flag: 'w' });
    // The mode given to writeFile applies only to a new file; make sure of it either way.
    await chmod(temporary, 0o600);
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new CliError(`Cannot save the credentials in ${file}: ${(error as Error).message}`, EXIT.failed);
  }
  return file;
}

export async function deleteCredentials(env: NodeJS.ProcessEnv): Promise<void> {
  await rm(credentialsPath(env), { force: true });
}
