import type { FastifyInstance } from 'fastify';
import type { Clock } from '../lib/clock.ts';
import { createJsonApi, installErrorHandling, registerOperations } from '../lib/http-api/index.ts';
import type { Database } from '../storage/index.ts';
import type { PetstoreTables } from './db-schema.ts';
import { petstoreErrors } from './errors.ts';
import { BODY_LIMIT_BYTES, petstoreDocument, toYaml } from './openapi.ts';
import { type PetstoreDeps, petstoreOperations } from './routes/index.ts';
import { schemas } from './schemas.ts';
import { createPetstoreStore } from './store/index.ts';

export interface PetstoreAppOptions {
  readonly database: Database<PetstoreTables>;
  readonly clock: Clock;
  readonly deprecation: PetstoreDeps['deprecation'];
  /** Pino options or false; JSON logs to stdout by default. */
  readonly logger?: boolean | { level: string };
}

/** Builds the Petstore API; the caller listens (or injects, in tests). */
export function buildPetstoreApp(options: PetstoreAppOptions): FastifyInstance {
  const app = createJsonApi({ bodyLimit: BODY_LIMIT_BYTES, logger: options.logger });

  const deps: PetstoreDeps = {
    store: createPetstoreStore(options.database, options.clock),
    clock: options.clock,
    deprecation: options.deprecation,
  };
  const operations = petstoreOperations(options.deprecation);
  installErrorHandling(app, operations, petstoreErrors, { bodyLimit: BODY_LIMIT_BYTES });
  registerOperations(app, operations, schemas, deps);

  const document = petstoreDocument(options.deprecation);
  const json = JSON.stringify(document, null, 2);
  const yaml = toYaml(document);
  app.get('/openapi.json', (_req, reply) => reply.type('application/json; charset=utf-8').send(json));
  app.get('/openapi.yaml', (_req, reply) => reply.type('application/yaml; charset=utf-8').send(yaml));
  return app;
}
