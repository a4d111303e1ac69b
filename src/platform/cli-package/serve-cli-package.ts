import { join, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { type Clock, systemClock } from '../../lib/clock.ts';
import { platformErrors } from '../errors.ts';
import { buildCliPackage, type CliPackage, type CliPackageOptions } from './build-cli-package.ts';

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
  /** Reads the time for the failed-build window (default: the system clock). */
  readonly clock?: Clock;
  /** Builds the package (default buildCliPackage); tests wrap it to count builds. */
  readonly build?: (options: CliPackageOptions) => Promise<CliPackage>;
}

/**
 * How long a failed build is kept: meanwhile every request gets the Error at once instead of
 * spawning `npm pack` again (a broken checkout would otherwise cost a build per install attempt).
 */
export const CLI_BUILD_RETRY_MS = 60_000;

/**
 * GET /cli/kennel-cli.tgz (and /cli/kennel-cli-<version>.tgz): the CLI package, built on the first
 * request (a few seconds, once per process) and then answered from memory, with a content ETag.
 * A failed build is answered as an Error (500, Retry-After) for CLI_BUILD_RETRY_MS, then tried again.
 */
export function registerCliPackage(app: FastifyInstance, options: CliPackageRoute): void {
  const clock = options.clock ?? systemClock;
  const buildPackage = options.build ?? buildCliPackage;
  let built: Promise<CliPackage> | undefined;
  /** Until when (epoch ms) the last failed build stands. */
  let failedUntil: number | undefined;
  const build = () => {
    if (failedUntil !== undefined && clock.now().getTime() >= failedUntil) {
      failedUntil = undefined;
      built = undefined;
    }
    built ??= buildPackage({
      root: options.root,
      outDir: join(resolve(options.dataDir), 'cli'),
      version: options.version,
    }).catch((error: unknown) => {
      failedUntil = clock.now().getTime() + CLI_BUILD_RETRY_MS;
      throw error;
    });
    return built.catch((error: unknown) => {
      const seconds = Math.max(1, Math.ceil(((failedUntil ?? 0) - clock.now().getTime()) / 1000));
      throw platformErrors.error(
        'internal_error',
        `This platform could not build its CLI package; its log has the cause. It tries again in ${seconds} s: install then, or ask its operator to read the log.`,
        { headers: { 'retry-after': String(seconds) }, cause: error },
      );
    });
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
