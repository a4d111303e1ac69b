export { readDeployDocument } from './deploy-document.ts';
export {
  type ProjectRoute,
  type PublishedRoutes,
  type RedirectRoute,
  type Route,
  readPublishedRoutes,
} from './routes.ts';
