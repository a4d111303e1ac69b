export { previewDeployIdOf, previewHost, previewLabel } from './preview-address.ts';
export { type PreviewDeploy, previewDeployFor } from './preview-deploy.ts';
export { type PreviewFacts, readPreviewFacts } from './preview-facts.ts';
export {
  createPreviewLink,
  listPreviewLinks,
  PREVIEW_LINK_LIFETIME,
  PREVIEW_TOKEN_PARAM,
  type PreviewLink,
  previewLinkUrl,
  revokePreviewLink,
} from './preview-links.ts';
export {
  exchangePreviewToken,
  HANDOFF_LIFETIME_MS,
  MEMBER_PREVIEW_SESSION_MS,
  previewCookieAdmits,
  startPreviewHandoff,
} from './preview-sessions.ts';
