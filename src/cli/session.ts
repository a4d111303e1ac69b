import { ApiClient } from './api-client.ts';
import { credentialsPath, readCredentials, type SavedCredentials } from './credentials.ts';
import { CliError, EXIT } from './errors.ts';
import { normaliseServer } from './server-address.ts';

export const DEFAULT_SERVER = 'http://localhost:8080';

/** Which server a command talks to, and with which token. */
export interface Target {
  readonly server: string;
  /** Where the server address came from, for whoami and error messages. */
  readonly serverSource: '--server' | 'KENNEL_URL' | 'credentials' | 'default';
  readonly token: string | undefined;
  readonly tokenSource: 'KENNEL_TOKEN' | 'credentials' | undefined;
  /** The credentials file, when there is one (even for another server). */
  readonly saved: SavedCredentials | undefined;
  /** A credentials file that could not be read: reported only when a token is needed. */
  readonly savedError: CliError | undefined;
}

/** How a usage error names the place a bad address came from. */
const SOURCE_NAMES: Record<Target['serverSource'], string> = {
  '--server': '--server',
  KENNEL_URL: 'KENNEL_URL',
  credentials: 'The server saved in credentials.json',
  default: 'The default server',
};

/**
 * Server: `--server`, else `KENNEL_URL`, else the saved server, else http://localhost:8080.
 * Token: `KENNEL_TOKEN`, else the saved token — but only for the server it was saved for, so a
 * token never travels to a server it does not belong to.
 */
export async function resolveTarget(flagServer: string | undefined, env: NodeJS.ProcessEnv): Promise<Target> {
  let saved: SavedCredentials | undefined;
  let savedError: CliError | undefined;
  try {
    saved = await readCredentials(env);
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    savedError = error;
  }
  const [raw, serverSource] =
    flagServer !== undefined
      ? ([flagServer, '--server'] as const)
      : env.KENNEL_URL
        ? ([env.KENNEL_URL, 'KENNEL_URL'] as const)
        : saved
          ? ([saved.server, 'credentials'] as const)
          : ([DEFAULT_SERVER, 'default'] as const);
  const server = normaliseServer(raw, SOURCE_NAMES[serverSource]);
  if (env.KENNEL_TOKEN) {
    return { server, serverSource, token: env.KENNEL_TOKEN, tokenSource: 'KENNEL_TOKEN', saved, savedError };
  }
  const matches = saved !== undefined && safeNormalise(saved.server) === server;
  return {
    server,
    serverSource,
    token: matches ? saved?.token : undefined,
    tokenSource: matches ? 'credentials' : undefined,
    saved,
    savedError,
  };
}

function safeNormalise(server: string): string | undefined {
  try {
    return normaliseServer(server);
  } catch {
    return undefined;
  }
}

/** A client carrying the token, or the reason there is none (exit 3). */
export function signedInClient(
  target: Target,
  env: NodeJS.ProcessEnv,
  userAgent: string,
  onServerVersion?: (version: string, server: string) => void,
): ApiClient {
  if (target.token === undefined) {
    if (target.savedError) throw target.savedError;
    const elsewhere =
      target.saved !== undefined
        ? ` The saved credentials (${credentialsPath(env)}) are for ${target.saved.server}.`
        : '';
    throw new CliError(
      `Not signed in to ${target.server}.${elsewhere} Run kennel login${target.serverSource === 'default' ? '' : ` --server ${target.server}`}, or set KENNEL_TOKEN.`,
      EXIT.auth,
      'not_signed_in',
    );
  }
  return new ApiClient({ server: target.server, token: target.token, userAgent, onServerVersion });
}
