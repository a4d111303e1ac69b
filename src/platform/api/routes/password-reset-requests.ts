import { ref } from '../../../lib/http-api/index.ts';
import {
  MAILED_RESET_LIFETIME_MS,
  type PasswordResetRequests,
  RESET_REQUEST_ANSWER,
} from '../../accounts/request-password-reset.ts';
import { operations } from '../operation.ts';
import { platformAddress } from '../platform-address.ts';
import { jsonBody, ok } from './contract.ts';

/** "Forgot password?" (no sign-in); requests go through `requests` (limits, mails under way). */
export const passwordResetRequestRoutes = (requests: PasswordResetRequests) =>
  operations('Account', {
    getPasswordResetPolicy: {
      route: 'GET /api/v1/password-reset/policy',
      summary: 'Whether a forgotten password can be reset by mail',
      description:
        'No sign-in: whether POST /api/v1/password-reset/request mails reset links (SMTP_URL is set), so the sign-in page offers the form, or else says to ask a team owner or the operator.',
      access: 'public',
      responses: ok('The policy', 'PasswordResetPolicy'),
      errors: ['malformed_url'],
      handler: async (_request, _reply, ctx) => ({ byMail: Boolean(ctx.config.smtpUrl) }),
    },
    requestPasswordReset: {
      route: 'POST /api/v1/password-reset/request',
      summary: 'Mail me a password reset link',
      description: `No sign-in ("Forgot password?"). The answer is 202 with the same body whether or not the email has an account. Only an account whose email is proved gets a mail: a one-time reset link (\`<address>/reset-password#token=krs_…\`, stored as a hash) that works for ${MAILED_RESET_LIFETIME_MS / 60_000} minutes, used like an owner's link (POST /api/v1/password-reset: every session signed out, every API token revoked), and only while the account still uses that email. Limits: ${requests.limits.perEmail} requests per email and ${requests.limits.perAddress} per client address in ${requests.limits.windowMs / 60_000} minutes (429 \`too_many_reset_requests\` with Retry-After). Without SMTP_URL the platform cannot mail: 409 \`mail_not_configured\` (ask a team owner for a link, or the operator).`,
      access: 'public',
      requestBody: jsonBody('The account email', 'PasswordResetRequest'),
      responses: {
        202: { description: 'Taken (the same answer for any email)', schema: ref('PasswordResetRequested') },
      },
      errors: ['mail_not_configured', 'too_many_reset_requests'],
      async handler({ body }, reply, ctx) {
        const platformUrl = platformAddress(reply.request, ctx.config.platformDomain);
        await requests.request(ctx, body.email, reply.request.ip, platformUrl);
        reply.code(202);
        return { message: RESET_REQUEST_ANSWER };
      },
    },
  });
