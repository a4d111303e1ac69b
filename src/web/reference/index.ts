export { CompressedBody } from './compressed-body.ts';
export {
  REFERENCE_FILES,
  REFERENCE_PREFIX,
  type ReferenceAssets,
  type ReferenceFile,
  referenceAssets,
} from './reference-assets.ts';
export { REFERENCE_PAGE_CSP, renderReferencePage } from './render-reference-page.ts';
