import { serviceErrorCatalog } from '../lib/http-api/common-errors.ts';

/** Every code the management API answers with; docs/platform-api.md ("Errors") lists them. */
export const platformErrors = serviceErrorCatalog({
  401: {
    unauthenticated: 'No valid session cookie or API token was sent.',
    invalid_credentials: 'The email and password do not match an account.',
    token_expired: 'The API token is past the expiry it was created with: create a new one.',
  },
  403: {
    csrf_failed: 'A cookie-authenticated change without the matching X-CSRF-Token header.',
    token_read_only:
      'The API token has the read scope: it may only send GET and HEAD. Use a token with full scope.',
    forbidden: 'Signed in, but this action needs another role (team owner, platform admin).',
    wrong_current_password: 'Changing your password needs your current password, and the one sent is not it.',
    sign_up_closed:
      'The platform does not take sign-ups (KENNEL_OPEN_SIGNUP is off): ask a team owner for an invitation.',
    plan_required: 'Custom domains need the Pro plan or above.',
    email_not_proved:
      "The invited email's account never proved it owns the email, and this invitation was not mailed, so accepting it proves nothing.",
    reset_link_outdated:
      'The reset link would not be allowed now: the account joined a team its maker does not own, became a platform admin, or its maker lost their rights.',
    domain_limit_reached: "The project has as many domains as its team's plan allows.",
  },
  404: {
    team_not_found: 'No team with this id is visible to you.',
    user_not_found: 'No account has this email.',
    member_not_found: 'The team has no member with this user id.',
    invitation_not_found: 'The team has no pending invitation with this id.',
    invitation_not_valid:
      'No live invitation has this token: it was used, revoked, replaced by a newer invitation or has expired.',
    reset_link_not_valid: 'No live password reset link has this token: it was used or has expired.',
    project_not_found: 'No project with this slug is visible to you.',
    deploy_not_found: 'The project has no deploy with this id.',
    preview_link_not_found:
      'The preview has no live share link with this id (never made, or already revoked).',
    domain_not_found: 'The project has no domain with this hostname.',
    token_not_found: 'You have no API token with this id.',
    webhook_not_found: 'The team has no webhook endpoint.',
    origin_grant_not_found: 'No origin grant has this id (it may have been revoked).',
    delivery_not_found: "The team's webhook has no message with this id.",
  },
  409: {
    deploy_not_preview:
      'The deploy is not a succeeded preview (deployed with preview: true), so it has no preview address to open or share.',
    slug_taken: 'Another project already uses this slug.',
    email_taken: 'Another account already uses this email.',
    already_member: 'The user is already a member of the team.',
    last_owner: 'The change would leave the team without an owner: make another member owner first.',
    mail_not_configured:
      'This platform sends no mail (SMTP_URL is not set), so it cannot mail a reset link: ask a team owner for one, or the operator (npm run reset-password).',
    team_has_projects:
      'The team still has projects: delete them or move them to another team before deleting the team.',
    deploy_required: 'The project has no successful deploy yet.',
    breaking_changes:
      'The deploy or promotion would break callers of the live API (the body lists the changes in `changes`); nothing changed. Send it again with allowBreaking: true to publish it anyway.',
    deploy_failed:
      'The deploy failed validation and has no document: it cannot be made live, compared or downloaded.',
    deploy_already_live: 'The deploy to promote is already the live one.',
    domain_already_added: 'The hostname is already a domain of this project.',
    reverify_not_available:
      'Re-verify is offered for a verified domain without a certificate after the waiting time.',
  },
  413: {
    document_too_large:
      'The deployed document, parsed and its YAML aliases expanded, is larger than DEPLOY_MAX_EXPANDED_SIZE; nothing was stored.',
  },
  422: {
    document_too_complex:
      'The deployed document has more YAML aliases, nesting levels, paths or operations than the platform allows (the message names the setting); nothing was stored.',
    invalid_hostname: 'The hostname is not a valid DNS name (the message says what is wrong).',
    hostname_ip_address: 'An IP address cannot be a custom domain; use a hostname.',
    hostname_wildcard: 'Wildcard hostnames cannot be custom domains; add each hostname.',
    hostname_platform_domain:
      'The platform’s own domain and its subdomains cannot be custom domains; every project already has one.',
    invalid_webhook_url:
      'The webhook URL is not allowed: https:// required (http:// only to loopback), no credentials, and no private address unless the platform allows them.',
    origin_not_allowed:
      'The origin URL points at a loopback, private, link-local or otherwise non-public address (or localhost), or at a private origin granted to other teams: a project may use it only when a platform admin grants its team the origin (POST /api/v1/origin-grants).',
    invalid_cors_policy:
      'The CORS policy is not valid (an origin that is not scheme://host[:port], `*` with credentials, no origin while on); `problems` names each field.',
    invalid_domain_config: 'The YAML domain configuration is not valid; the message names line and column.',
  },
  429: {
    too_many_sign_in_attempts:
      'Too many failed sign-ins for this email, or too many sign-in attempts from this address; Retry-After says when to try again.',
    too_many_reset_requests:
      'Too many password reset requests for this email or from this address; Retry-After says when to try again.',
  },
  503: {
    sign_in_busy:
      'The platform is checking as many passwords as it allows at once; Retry-After says when to try again.',
  },
});

export type PlatformErrorCode = keyof typeof platformErrors.specs;
