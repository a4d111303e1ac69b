import { hostname } from 'node:os';
import type { CreatedToken, Session } from '../../platform/api-types.ts';
import { ApiClient, path } from '../api-client.ts';
import { defineCommand, positiveInteger } from '../command.ts';
import { saveCredentials } from '../credentials.ts';
import { CliError, EXIT } from '../errors.ts';
import { ask, askHidden, readStdin } from '../prompt.ts';
import { normaliseServer } from '../server-address.ts';

/** The platform's session cookie: `__Host-`-prefixed over HTTPS, the plain name over HTTP. */
const SESSION_COOKIES = ['__Host-kennel_session', 'kennel_session'];

export const loginCommand = defineCommand({
  name: 'login',
  summary: 'Sign in and save an API token for the other commands',
  options: {
    email: { type: 'string', value: 'EMAIL', description: 'Your account email (asked for on a terminal)' },
    'password-stdin': {
      type: 'boolean',
      description: 'Read the password from stdin (the way to sign in off a terminal)',
    },
    'print-token': {
      type: 'boolean',
      description: 'Print the new token once on stdout (for KENNEL_TOKEN elsewhere); it is never shown again',
    },
    'expires-in-days': {
      type: 'string',
      value: 'DAYS',
      description: 'The token stops working after DAYS days (1 to 366; by default it never expires)',
    },
    'read-only': {
      type: 'boolean',
      description:
        'A read-only token: it can list and show, and every change is refused (403 token_read_only)',
    },
  },
  description: `Checks your email and password, creates a personal API token named "kennel CLI on <this host>" and saves it with the server address in credentials.json (mode 0600) under $KENNEL_CONFIG_DIR (default ~/.config/kennel). Signing in again replaces the saved token and revokes the old one.

On a terminal, the email and password are asked for (the password without echo). In scripts, give --email and pipe the password with --password-stdin.

--expires-in-days and --read-only make a token that expires (then every command answers token_expired: sign in again) or only reads, for a dashboard or a CI job that only looks.`,
  examples: [
    'kennel login',
    'kennel login --server https://kennel.example.com --email me@example.com',
    'printf %s "$PASSWORD" | kennel login --email me@example.com --password-stdin',
    'kennel login --email me@example.com --expires-in-days 30 --read-only --print-token',
  ],
  async run(call) {
    const { io, out, target } = call;
    const interactive = io.stdin.isTTY === true;
    const fromStdin = call.flag('password-stdin');
    const days = call.string('expires-in-days');
    const expiresInDays = days === undefined ? undefined : positiveInteger(call, '--expires-in-days', days);
    if (expiresInDays !== undefined && expiresInDays > 366) {
      throw call.usage(`--expires-in-days must be from 1 to 366 (got ${expiresInDays}).`);
    }
    const readOnly = call.flag('read-only');
    let email = call.string('email');
    if (email === undefined) {
      if (!interactive || fromStdin) throw call.usage('Give --email when the password comes from stdin.');
      email = await ask(io, 'Email: ');
    }
    let password: string;
    if (fromStdin) {
      password = (await readStdin(io)).replace(/\r?\n$/, '');
      if (password === '') throw call.usage('--password-stdin read an empty password.');
    } else {
      if (!interactive) {
        throw call.usage('stdin is not a terminal: pipe the password in with --password-stdin.');
      }
      password = await askHidden(io, 'Password: ');
    }

    const client = call.anonymous();
    const signIn = await call.progress.during(
      `Signing in to ${target.server}…`,
      client.shaped<Session>(
        'POST',
        '/api/v1/session',
        (b) => typeof b?.email === 'string' && typeof b.csrfToken === 'string',
        { email, password },
      ),
    );
    const cookie = signIn.headers
      .getSetCookie()
      .map((c) => c.split(';')[0] ?? '')
      .find((c) => SESSION_COOKIES.some((name) => c.startsWith(`${name}=`)));
    if (!cookie) {
      throw new CliError(
        `${target.server} accepted the password but sent no session cookie. Is it the Kennel platform?`,
        EXIT.unreachable,
        'no_session_cookie',
      );
    }
    const session = client.with({ headers: { cookie, 'x-csrf-token': signIn.body.csrfToken } });
    const created = await session.post<CreatedToken>('/api/v1/tokens', {
      name: `kennel CLI on ${hostname()}`.slice(0, 100),
      // Sent only when asked for: a platform older than token scopes refuses fields it does not know.
      ...(readOnly && { scope: 'read' }),
      ...(expiresInDays !== undefined && { expiresInDays }),
    });
    // The dashboard session only served to create the token.
    await session.delete('/api/v1/session').catch(() => undefined);

    const previous = target.saved;
    if (previous && previous.tokenId !== undefined && sameServer(previous.server, target.server)) {
      await new ApiClient({ server: target.server, token: previous.token })
        .delete(path`/api/v1/tokens/${previous.tokenId}`)
        .catch(() => undefined);
    }
    const file = await saveCredentials(io.env, {
      server: target.server,
      email: signIn.body.email,
      token: created.token,
      tokenId: created.id,
    });

    const { token, ...info } = created;
    const printToken = call.flag('print-token');
    const limits = [
      info.scope === 'read' ? 'read-only' : '',
      info.expiresAt ? `expires ${info.expiresAt}` : '',
    ].filter(Boolean);
    const summary = `Signed in to ${target.server} as ${signIn.body.email}${signIn.body.isAdmin ? ' (platform admin)' : ''}. The API token "${info.name}" (${info.prefix}…${limits.length > 0 ? `, ${limits.join(', ')}` : ''}) is saved in ${file}.`;
    out.result(
      {
        server: target.server,
        email: signIn.body.email,
        isAdmin: signIn.body.isAdmin,
        credentialsFile: file,
        token: printToken ? created : info,
      },
      () => {
        if (printToken) {
          out.line(token);
          out.note(summary);
        } else out.line(summary);
      },
    );
    if (io.env.KENNEL_TOKEN) {
      out.note('Note: KENNEL_TOKEN is set in this shell and takes precedence over the saved token.');
    }
    return EXIT.ok;
  },
});

function sameServer(a: string, b: string): boolean {
  try {
    return normaliseServer(a) === normaliseServer(b);
  } catch {
    return false;
  }
}
