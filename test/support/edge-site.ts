import { createServer, type IncomingHttpHeaders, type RequestListener, type Server } from 'node:http';
import type { OriginProxy } from '../../src/edge/index.ts';
import { AcmeIssuer } from '../../src/platform/certificates/acme-issuer.ts';
import { CertificateStore, databaseChallenges } from '../../src/platform/certificates/certificate-store.ts';
import { InternalIssuer } from '../../src/platform/certificates/internal-issuer.ts';
import type { PlatformContext } from '../../src/platform/context.ts';
import type { Dialect } from '../../src/storage/index.ts';
import { startDns, type TestDns } from './dns.ts';
import { listenOnLoopback } from './http.ts';
import type { TestPebble } from './pebble.ts';
import {
  seedProject,
  seedTeam,
  startPlatformContext,
  TEST_SEALING_KEY,
  type TestPlatform,
} from './platform.ts';

/**
 * The setups the edge suites share: an origin on loopback, a platform with a team and its
 * projects deployed, and the internal CA's certificates for a TLS edge. A suite starts the edge it
 * tests on top (test/support/edge.ts: startTestEdge, startHttpEdge, startPlainEdge).
 */

/** A server on a free loopback port: an origin, or a front for a proxy under test. */
export interface LoopbackServer {
  readonly server: Server;
  readonly port: number;
  /** `http://127.0.0.1:<port>`, as a project's origin URL. */
  readonly url: string;
  /** Stops listening and cuts the edge's pooled connections to it. */
  close(): void;
}

/** A server answering with `handler` on a free loopback port (an origin a project points at). */
export async function startOrigin(handler: RequestListener): Promise<LoopbackServer> {
  const server = createServer(handler);
  const port = await listenOnLoopback(server);
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}`,
    close() {
      server.close();
      server.closeAllConnections();
    },
  };
}

/**
 * A server handing every request to `proxy` as the edge does for a client of `x.test` on loopback
 * (request id `req-1`), to the origin and path `route` names: OriginProxy on its own.
 */
export function startProxyFront(
  proxy: OriginProxy,
  route: (url: string) => readonly [origin: string, path: string],
): Promise<LoopbackServer> {
  return startOrigin((req, res) => {
    const [origin, path] = route(req.url ?? '/');
    void proxy.forward(req, res, origin, path, {
      clientAddress: '127.0.0.1',
      host: 'x.test',
      proto: 'http',
      requestId: 'req-1',
    });
  });
}

/** A request as the origin read it, body and all. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  httpVersion: string;
}

/** An origin that keeps the requests it read. */
export interface RecordingOrigin extends LoopbackServer {
  readonly seen: SeenRequest[];
}

/**
 * An origin that reads each request to its end, keeps it in `seen` (the corpora check what the
 * edge forwarded), then lets `answer` reply: by default JSON of `reply(request)` with a
 * Content-Length. `encoding` reads the body as text (latin1 keeps smuggled bytes as sent).
 */
export async function recordingOrigin({
  encoding = 'utf8',
  reply = (seen) => ({ url: seen.url }),
  answer,
}: {
  encoding?: BufferEncoding;
  reply?: (seen: SeenRequest) => unknown;
  answer?: (seen: SeenRequest, res: Parameters<RequestListener>[1]) => void;
} = {}): Promise<RecordingOrigin> {
  const seen: SeenRequest[] = [];
  const origin = await startOrigin((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: SeenRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(encoding),
        httpVersion: req.httpVersion,
      };
      seen.push(request);
      if (answer) return answer(request, res);
      const text = JSON.stringify(reply(request));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
  });
  return { ...origin, seen };
}

/** A project of the seeded team: deployed with `document` (default: an empty one titled `title` or `name`). */
export interface SiteProject {
  readonly slug: string;
  /** Default: the slug. */
  readonly name?: string;
  readonly originUrl: string;
  /** `false`: created, never deployed. */
  readonly document?: string | false;
  readonly title?: string;
}

/** seedTeam (admin, owner, the owner's team on `plan`), then each project made and deployed by the owner. */
export async function seedSites(
  ctx: PlatformContext,
  projects: readonly SiteProject[],
  plan: Parameters<typeof seedTeam>[1] = 'pro',
) {
  const seeded = await seedTeam(ctx, plan);
  const made = [];
  for (const { name, ...project } of projects) {
    made.push(
      await seedProject(ctx, seeded.owner, {
        teamId: seeded.team.id,
        name: name ?? project.slug,
        ...project,
      }),
    );
  }
  return {
    ...seeded,
    /** The projects as made, in the order given. */
    projects: made.map((m) => m.project),
    /** Their deploys (undefined for `document: false`). */
    deploys: made.map((m) => m.deploy),
  };
}

export interface EdgeSite extends Awaited<ReturnType<typeof seedSites>> {
  readonly p: TestPlatform;
  close(): Promise<void>;
}

/**
 * A control plane on a fresh `dialect` database with settings `env` (startPlatformContext), its
 * clock at the real time when `now` (TLS clients check certificates against it), and `projects`
 * seeded (seedSites): what an edge suite serves before it starts its edge.
 */
export async function startEdgeSite(
  dialect: Dialect,
  {
    env = {},
    now = false,
    projects = [],
    plan,
  }: {
    env?: Record<string, string>;
    now?: boolean;
    projects?: readonly SiteProject[];
    plan?: Parameters<typeof seedTeam>[1];
  } = {},
): Promise<EdgeSite> {
  const p = await startPlatformContext(dialect, env);
  if (now) p.clock.set(Date.now());
  try {
    return { p, ...(await seedSites(p.ctx, projects, plan)), close: () => p.close() };
  } catch (error) {
    await p.close();
    throw error;
  }
}

/** The internal CA's certificates, as a TLS edge is given them (startTestEdge's `store` and `defaultCertificate`). */
export interface InternalCertificates {
  readonly store: CertificateStore;
  readonly issuer: InternalIssuer;
  /** The internal CA's root, for clients that check the edge's certificates. */
  readonly rootPem: string;
  /** Issued for `name`: served to hosts without a certificate of their own. */
  readonly defaultCertificate: { certificatePem: string; privateKeyPem: string };
}

/**
 * A certificate store on the platform's database (sealed with TEST_SEALING_KEY), its internal
 * CA, and a default certificate for `name` (default: the platform domain) issued at `issuedAt`
 * (default: the platform clock's time).
 */
export async function internalCertificates(
  p: TestPlatform,
  name: string = p.ctx.config.platformDomain,
  { issuedAt }: { issuedAt?: () => Date } = {},
): Promise<InternalCertificates> {
  const store = new CertificateStore(p.ctx.db, [TEST_SEALING_KEY]);
  const ca = await store.internalCa(p.clock.now());
  const issuer = new InternalIssuer(ca, issuedAt ? { now: issuedAt } : {});
  return { store, issuer, rootPem: ca.certificatePem, defaultCertificate: await issuer.issue(name) };
}

/**
 * NSD serving example.test and platform.test, with `petstore.platform.test` at loopback and each
 * of `cnames` (names in example.test) a CNAME to it: where the edge suites' custom domains point.
 * Pass `dns.servers.join(',')` as DNS_SERVERS.
 */
export async function startSiteDns(...cnames: string[]): Promise<TestDns> {
  const dns = await startDns({ zones: ['example.test', 'platform.test'] });
  try {
    await dns.setRecords('platform.test', [{ name: 'petstore', type: 'A', value: '127.0.0.1' }]);
    if (cnames.length > 0) {
      await dns.setRecords(
        'example.test',
        cnames.map((name) => ({ name, type: 'CNAME', value: 'petstore.platform.test' })),
      );
    }
  } catch (error) {
    await dns.stop();
    throw error;
  }
  return dns;
}

/** The ACME issuer of a test Pebble (its directory and CA), polling fast; `caaIdentities` as the CA's. */
export function pebbleIssuer(pebble: TestPebble, caaIdentities?: string[]): AcmeIssuer {
  return new AcmeIssuer({
    directoryUrl: pebble.directoryUrl,
    email: 'ops@example.test',
    caPem: pebble.caPem,
    ...(caaIdentities && { caaIdentities }),
    polling: { minDelayMs: 20, maxDelayMs: 200 },
  });
}

/** Places an http-01 answer where the edge reads it (the database), as an order does. */
export function placeChallenge(p: TestPlatform, hostname: string, token: string, keyAuthorization: string) {
  return databaseChallenges(p.ctx.db, () => p.clock.now()).put(token, keyAuthorization, hostname);
}

/** A domain configuration: www.example.test and shop.example.test, www sent to shop with 301. */
export const WWW_TO_SHOP =
  'domains:\n  names: [shop.example.test, www.example.test]\n  primary: shop.example.test\n  redirects:\n    - from: www.example.test\n      to: shop.example.test\n      status: 301\n';
