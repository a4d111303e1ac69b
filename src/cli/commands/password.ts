import { defineCommand, type GroupSpec } from '../command.ts';
import { PASSWORD_STDIN, passwords } from '../passwords.ts';

export const passwordGroup: GroupSpec = {
  name: 'password',
  summary: 'Change your password, or set one with a reset token',
  commands: [
    defineCommand({
      name: 'password change',
      summary: 'Change your password (needs the current one); your other sessions are signed out',
      options: PASSWORD_STDIN,
      description:
        'Asks for the current and the new password (at least 12 characters). With --password-stdin, give them on two lines. Dashboard sessions are signed out; API tokens, this CLI’s included, keep working.',
      examples: [
        'kennel password change',
        'printf "%s\\n%s\\n" "$OLD" "$NEW" | kennel password change --password-stdin',
      ],
      async run(call) {
        const [currentPassword, newPassword] = await passwords(call, ['Current password', 'New password']);
        await call.api().put('/api/v1/me/password', { currentPassword, newPassword });
        call.out.resultLine(
          { changed: true },
          'Password changed. Your other dashboard sessions are signed out.',
        );
      },
    }),
    defineCommand({
      name: 'password reset',
      summary: 'Set a new password with the reset token a team owner gave you',
      args: ['TOKEN'],
      options: PASSWORD_STDIN,
      description:
        'Needs no sign-in: the token is the proof, once. Every session of the account is signed out and its API tokens are revoked. Then sign in with kennel login.',
      examples: ['kennel password reset krs_… --server https://kennel.example.com'],
      async run(call) {
        const [password] = await passwords(call, ['New password']);
        const done = await call
          .anonymous()
          .post<{ email: string; sessionsEnded: number; tokensRevoked: number }>('/api/v1/password-reset', {
            token: call.args.TOKEN,
            password,
          });
        call.out.result(done, () => {
          call.out.line(
            `The password of ${done.email} is set. Signed out ${done.sessionsEnded} session(s) and revoked ${done.tokensRevoked} API token(s).`,
          );
          call.out.line(`Sign in with: kennel login --email ${done.email}`);
        });
      },
    }),
  ],
};
