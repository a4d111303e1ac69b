import type { Token } from '../../platform/api-types.ts';
import { ApiClient, path } from '../api-client.ts';
import { defineCommand } from '../command.ts';
import { credentialsPath, deleteCredentials } from '../credentials.ts';
import { ApiFailure, CliError, EXIT } from '../errors.ts';

export const logoutCommand = defineCommand({
  name: 'logout',
  summary: 'Revoke the saved API token and delete the credentials file',
  description:
    'Revokes the token saved by kennel login on the server it belongs to, then deletes the credentials file. When the server cannot be reached the file is kept (the token still works), so that logout can be run again. A token given through KENNEL_TOKEN is not touched.',
  examples: ['kennel logout'],
  async run(call) {
    const { io, out, target } = call;
    const file = credentialsPath(io.env);
    const saved = target.saved;
    if (saved === undefined) {
      if (target.savedError) await deleteCredentials(io.env);
      out.result({ signedOut: target.savedError !== undefined, revoked: false }, () =>
        out.line(
          target.savedError
            ? `Deleted the damaged ${file}; its token, if any, was not revoked (revoke it in the dashboard).`
            : `Not signed in: there are no saved credentials (${file}).`,
        ),
      );
      return EXIT.ok;
    }
    const client = new ApiClient({ server: saved.server, token: saved.token });
    let revoked = false;
    try {
      const id =
        saved.tokenId ??
        singleMatch(
          (await client.get<Token[]>('/api/v1/tokens')).filter((t) => saved.token.startsWith(t.prefix)),
        );
      if (id !== undefined) {
        await client.delete(path`/api/v1/tokens/${id}`);
        revoked = true;
      }
    } catch (error) {
      // 401: the token was revoked already; 404: it is gone. Either way nothing is left to revoke.
      if (error instanceof ApiFailure && (error.status === 401 || error.status === 404)) revoked = false;
      else if (error instanceof CliError && error.exitCode === EXIT.unreachable) {
        throw new CliError(
          `${error.message} The token was not revoked, so ${file} is kept: run kennel logout again once the server answers.`,
          EXIT.unreachable,
          error.code,
        );
      } else throw error;
    }
    await deleteCredentials(io.env);
    out.result({ signedOut: true, revoked, server: saved.server, email: saved.email }, () =>
      out.line(
        revoked
          ? `Signed out of ${saved.server} (${saved.email}): the token is revoked and ${file} deleted.`
          : `Signed out of ${saved.server}: the token was already revoked; ${file} deleted.`,
      ),
    );
    if (io.env.KENNEL_TOKEN)
      out.note('Note: KENNEL_TOKEN is still set in this shell; unset it to sign out fully.');
    return EXIT.ok;
  },
});

function singleMatch(tokens: Token[]): number | undefined {
  return tokens.length === 1 ? tokens[0]?.id : undefined;
}
