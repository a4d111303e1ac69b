import type { FastifyInstance } from 'fastify';
import { buildManagementApp } from '../platform/api/app.ts';
import type { PlatformContext } from '../platform/context.ts';
import { dashboardNotFound, registerDashboard } from '../web/dashboard/index.ts';

/** The dashboard, as the management app serves it beside the API. */
export const dashboardPages = {
  register: (app: FastifyInstance) => registerDashboard(app),
  notFound: dashboardNotFound(),
};

/**
 * The control plane's app as a platform node serves it at the platform domain: the management API
 * (src/platform/api/app.ts) with the dashboard's pages (src/web/dashboard). The API does not import
 * the front end; this is where the two meet.
 */
export function buildPlatformApp(
  ctx: PlatformContext,
  options: Omit<Parameters<typeof buildManagementApp>[1] & {}, 'pages'> = {},
): FastifyInstance {
  return buildManagementApp(ctx, { ...options, pages: dashboardPages });
}
