import type { Socket } from 'node:net';
import { readDeprecationReach } from '../../traffic/read-deprecation-reach.ts';
import { openRequestLogStream, pumpRequestLogs } from '../../traffic/read-request-log-stream.ts';
import { DEFAULT_LOG_LIMIT, listRequestLogs, MAX_LOG_LIMIT } from '../../traffic/read-request-logs.ts';
import { readProjectTraffic } from '../../traffic/read-traffic.ts';
import { actorOf } from '../auth.ts';
import { operations } from '../operation.ts';
import { inProject, passing } from './answers.ts';
import { ok } from './contract.ts';

export const trafficRoutes = operations('Traffic', {
  getProjectTraffic: {
    route: 'GET /api/v1/projects/{slug}/traffic',
    summary: "A project's traffic",
    description:
      'Requests, errors (status 500 or above) and latency percentiles of the project over a range: totals, a series (by the minute for ranges up to 48 hours, by the hour beyond) and groups by operation (with deprecated operations and their sunset marked), by caller or by status, summed over every edge node. What is recorded and kept: docs/traffic.md.',
    parameters: [
      {
        name: 'since',
        in: 'query',
        description: 'Start: a duration before now (1h, 24h, 7d, 30d) or an ISO date and time; default 24h',
        schema: { type: 'string', minLength: 2, maxLength: 40 },
      },
      {
        name: 'until',
        in: 'query',
        description: 'End: a duration before now or an ISO date and time; default now',
        schema: { type: 'string', minLength: 2, maxLength: 40 },
      },
      {
        name: 'by',
        in: 'query',
        description: 'How the groups are made',
        schema: { type: 'string', enum: ['operation', 'caller', 'status'], default: 'operation' },
      },
    ],
    responses: ok('The traffic', 'ProjectTraffic'),
    handler: passing('slug', 'query')(readProjectTraffic),
  },
  getDeprecationReach: {
    route: 'GET /api/v1/projects/{slug}/traffic/deprecations',
    summary: 'Who still calls what is going away',
    description:
      'Each deprecated operation of the live deploy with its sunset, and the callers that called it in the last 7 days (today and the six days before, UTC), with their requests and their last call.',
    responses: ok('Deprecated operations and their callers', 'DeprecationReach'),
    handler: inProject(readDeprecationReach),
  },
  listRequestLogs: {
    route: 'GET /api/v1/projects/{slug}/logs',
    summary: "A project's request log",
    description:
      'The last requests of the project as the edge nodes logged them (each keeps the last REQUEST_LOG_SIZE per project), newest first: time, method, operation, path without query values, status, latency, bytes, caller label, request id. No bodies and no header values are kept. Page with before=<the last id>.',
    parameters: [
      {
        name: 'limit',
        in: 'query',
        description: `How many (default ${DEFAULT_LOG_LIMIT})`,
        schema: { type: 'integer', minimum: 1, maximum: MAX_LOG_LIMIT, default: DEFAULT_LOG_LIMIT },
      },
      {
        name: 'before',
        in: 'query',
        description: 'Only entries with an id below this one (the next page)',
        schema: { type: 'integer', minimum: 1 },
      },
    ],
    responses: ok('Logged requests', 'RequestLogPage'),
    handler: passing('slug', 'query')(listRequestLogs),
  },
  streamRequestLogs: {
    route: 'GET /api/v1/projects/{slug}/logs/stream',
    summary: "Follow a project's request log",
    description:
      'Server-Sent Events: each request logged from now on (from every edge node), as it is stored (within about a second), as `id: <id>` and `data: <RequestLog JSON>`; a `: keep-alive` comment every 15 s. Reconnecting with Last-Event-ID (EventSource does) resumes after that entry; `after` starts after a given id. The stream lasts until the client closes it.',
    parameters: [
      {
        name: 'after',
        in: 'query',
        description: 'Start after this id (default: after the newest entry now)',
        schema: { type: 'integer', minimum: 0 },
      },
      {
        name: 'Last-Event-ID',
        in: 'header',
        description: 'The last id received, on a reconnect: the stream resumes after it',
        schema: { type: 'string', pattern: '^(0|[1-9][0-9]{0,15})$' },
      },
    ],
    responses: {
      200: {
        description: 'The stream',
        otherContent: {
          'text/event-stream': {
            type: 'string',
            description: 'Events `id: <id>` + `data: <RequestLog as JSON>`, blank-line separated',
          },
        },
      },
    },
    async handler({ caller, params, query, headers, id }, reply, ctx) {
      const start = await openRequestLogStream(
        ctx,
        actorOf(caller),
        params.slug,
        headers['last-event-id'],
        query.after,
      );
      // The answer is written on the connection as it comes: Fastify neither buffers nor ends it.
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        // Proxies that buffer answers (nginx) pass this one through as it comes.
        'x-accel-buffering': 'no',
        'x-request-id': id,
      });
      const server = (reply.request.raw.socket as (Socket & { server?: { listening?: boolean } }) | null)
        ?.server;
      await pumpRequestLogs(ctx.db, start.projectId, start.after, res, {
        listening: () => server?.listening !== false,
        onError: (error) => reply.log.warn({ err: error }, 'reading the request log failed; retrying'),
      });
      if (!res.writableEnded) res.end();
      // Answered already, on the hijacked connection: Fastify sends nothing more.
      return reply;
    },
  },
});
