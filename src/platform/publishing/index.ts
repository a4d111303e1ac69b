export { readDeployDocument } from './deploy-document.ts';
export { listPublications, type Publication, recordPublication } from './publications.ts';
export { readPublishedProject } from './published-project.ts';
export {
  type ProjectRoute,
  type PublishedRoutes,
  type RedirectRoute,
  type Route,
  readPublishedRoutes,
} from './routes.ts';
