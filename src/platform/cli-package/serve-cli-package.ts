import { join, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { platformErrors } from '../errors.ts';
import { buildCliPackage, type CliPackage } from './build-cli-package.ts';

/** Where the platform serves its CLI: the stable address, and the tarball named by its version. */
export const CLI_PACKAGE_PATH = '/cli/kennel-cli.tgz';

/** The command that installs the CLI from a platform at `origin` (`http://localhost:8080`). */
export function cliInstallLine(origin: string): string {
  return `npm install -g ${origin}${CLI_PACKAGE_PATH}`;
}

export interface CliPackageRoute {
  /** The checkout the CLI's sources are read from. */
  readonly root: string;
  /** The data directory: the tarball is written to its cli/. */
  readonly dataDir: string;
  readonly version: string;
}

/**
 * GET /cli/kennel-cli.tgz (and /cli/kennel-cli-<version>.tgz): the CLI package, built on the first
 * request (a few seconds, once per process) and then answered from memory, with a content ETag.
 */
export function registerCliPackage(app: FastifyInstance, options: CliPackageRoute): void {
  let built: Promise<CliPackage> | undefined;
  const build = () => {
    built ??= buildCliPackage({
      root: options.root,
      outDir: join(resolve(options.dataDir), 'cli'),
      version: options.version,
    }).catch((error: unknown) => {
      built = undefined;
      throw error;
    });
    return built;
  };
  const versioned = `kennel-cli-${options.version}.tgz`;
  app.get<{ Params: { file: string } }>('/cli/:file', async (request, reply) => {
    const { file } = request.params;
    if (file !== 'kennel-cli.tgz' && file !== versioned) {
      throw platformErrors.error(
        'route_not_found',
        `This platform serves the CLI of Kennel ${options.version} only, at ${CLI_PACKAGE_PATH}.`,
      );
    }
    const pkg = await build();
    reply
      .header('etag', pkg.etag)
      // Rebuilt by a newer platform at the same address: revalidated on every install.
      .header('cache-control', 'no-cache')
      .header('content-disposition', `attachment; filename="${pkg.fileName}"`);
    if (request.headers['if-none-match'] === pkg.etag) return reply.code(304).send();
    return reply.type('application/gzip').send(pkg.body);
  });
}
