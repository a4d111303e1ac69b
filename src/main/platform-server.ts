import { ConfigError, loadPetstoreConfig, loadPlatformConfig } from '../config/index.ts';
import { cliInstallLine } from '../platform/cli-package/serve-cli-package.ts';
import { assemblePlatform, PortUnavailableError, type StartedPlatform } from './assemble-platform.ts';
import { startBanner } from './platform-banner.ts';

const urlOf = (host: string, port: number) => `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

/**
 * The "Kennel listening" log line, then one block on the terminal (the secrets shown once, never
 * logged), written through the logger's own destination so it comes after the queued lines.
 */
async function announce(config: ReturnType<typeof loadPlatformConfig>, node: StartedPlatform): Promise<void> {
  const port = node.httpPort;
  const address = urlOf(config.host, port);
  const dashboard = `http://${config.platformDomain}${port === 80 ? '' : `:${port}`}/`;
  node.log.info(
    {
      address,
      https: `https://${config.host}:${node.httpsPort}`,
      petstore: node.petstoreUrl,
      storage: node.database.dialect,
      root: node.rootPemFile,
      ...(node.operatorPort !== undefined && { metrics: urlOf(config.metricsHost, node.operatorPort) }),
    },
    `Kennel listening on ${address}: dashboard and API at http://${config.platformDomain}:${port}, projects at http://<slug>.${config.platformDomain}:${port}`,
  );
  const { first, petstoreKey } = node;
  logStream(node.log).write(
    startBanner({
      dashboard,
      cliInstall: cliInstallLine(dashboard.replace(/\/$/, '')),
      ...(first && {
        firstStart: {
          email: first.email,
          ...(first.generatedPassword && { generatedPassword: first.generatedPassword }),
          project: first.project,
          origin: node.petstoreUrl ?? '',
        },
      }),
      ...(petstoreKey && { petstoreKey: petstoreKey.secret }),
    }),
  );
}

/**
 * Where the logger writes: pino's destination writes asynchronously (sonic-boom) and its flush
 * does not wait for a write under way, so the block goes through the same destination, after the
 * lines already queued there; stdout itself without a logger (LOG_LEVEL=silent).
 */
function logStream(log: object): { write(text: string): unknown } {
  for (let level: object | null = log; level; level = Object.getPrototypeOf(level)) {
    const symbol = Object.getOwnPropertySymbols(level).find((s) => s.description === 'pino.stream');
    const stream = symbol && (level as Record<symbol, { write?: unknown }>)[symbol];
    if (stream && typeof stream.write === 'function') return stream as { write(text: string): unknown };
  }
  return process.stdout;
}

/** `npm start`: the platform, with the Petstore API running as its first project's origin. */
async function main(): Promise<void> {
  let config: ReturnType<typeof loadPlatformConfig>;
  let petstoreConfig: ReturnType<typeof loadPetstoreConfig>;
  try {
    config = loadPlatformConfig(process.env);
    petstoreConfig = loadPetstoreConfig({ ...process.env, PORT: String(process.env.PETSTORE_PORT ?? 4010) });
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  const node = assemblePlatform(config, {
    petstore: petstoreConfig,
    announce: (started) => announce(config, started),
  });

  /**
   * Graceful shutdown (assemble-platform.ts `stop`): readiness turns 503 at once, the public
   * listeners drain (bounded by SHUTDOWN_TIMEOUT), then every part stops in reverse order.
   * A second signal cuts the remaining connections at once.
   */
  let stopping = false;
  const shutdown = (signal: string) => {
    const { log } = node;
    // Before the node has a logger (opening the databases) there is nothing to drain.
    if (!log) process.exit(1);
    if (stopping) {
      log.warn({ signal }, 'second signal: cutting the connections still open');
      node.cutConnections();
      return;
    }
    stopping = true;
    log.info({ signal, timeoutMs: config.shutdownTimeoutMs }, 'shutting down: draining connections');
    node.stop().then(
      () => {
        log.info({ signal }, 'stopped');
        process.exit(0);
      },
      (error: unknown) => {
        log.fatal({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  try {
    await node.start();
  } catch (error) {
    // Stopped by a signal while starting: the shutdown above ends the process.
    if (stopping) return;
    // A port already in use ends the start with one line naming the port and its setting, and
    // exit status 2 (a configuration problem), before anything has been created.
    if (error instanceof PortUnavailableError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

await main();
