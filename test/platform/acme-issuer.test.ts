import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { AcmeIssuer, type AcmeIssuerOptions } from '../../src/platform/certificates/acme-issuer.ts';
import { obtainCertificate } from '../../src/platform/certificates/certificate-request.ts';
import { type ChallengeStore, IssuerError } from '../../src/platform/certificates/issuer.ts';
import { startDns, type TestDns } from '../support/dns.ts';
import { startPebble, type TestPebble } from '../support/pebble.ts';

/**
 * The ACME issuer against Pebble, which resolves names through NSD and fetches the http-01 answers
 * from a loopback server reading the same in-memory challenge store the issuer writes.
 */

const ZONE = 'example.test';
const SHOP = `shop.${ZONE}`;
/** Fast polling: Pebble validates at once (PEBBLE_VA_NOSLEEP). */
const POLLING = { minDelayMs: 20, maxDelayMs: 200 };
/** A failure is found out in milliseconds here; a few seconds allow for a slow machine. */
const QUICK_FAILURE_MS = 5_000;

describe('AcmeIssuer against Pebble', () => {
  let dns: TestDns;
  let web: ChallengeWeb;
  let pebble: TestPebble;
  const issuers: AcmeIssuer[] = [];
  const newIssuer = (options: Partial<AcmeIssuerOptions> = {}) => {
    const issuer = new AcmeIssuer({
      directoryUrl: pebble.directoryUrl,
      email: 'ops@example.test',
      caPem: pebble.caPem,
      polling: POLLING,
      ...options,
    });
    issuers.push(issuer);
    return issuer;
  };

  before(async () => {
    dns = await startDns({ zones: [ZONE] });
    // No AAAA: Pebble asks for AAAA first and dials only the first address, and the answers are
    // served on 127.0.0.1 only.
    await dns.setRecords(ZONE, [
      { name: 'shop', type: 'A', value: '127.0.0.1' },
      // Loopback too, but nothing listens there: refused at once instead of a dial timeout.
      { name: 'elsewhere', type: 'A', value: '127.0.0.2' },
    ]);
    web = await startChallengeWeb();
    pebble = await startPebble({ httpPort: web.port, dnsServer: dns.servers[0] as string });
  });

  after(async () => {
    await Promise.all(issuers.map((issuer) => issuer.close()));
    await pebble?.stop();
    await web?.close();
    await dns?.stop();
  });

  it('issues a certificate for a hostname over http-01, with a new account key it hands over', async (t) => {
    const accountKeys: string[] = [];
    const issuer = newIssuer({ onAccountKey: async (pem) => void accountKeys.push(pem) });

    const started = performance.now();
    const issued = await obtainCertificate(issuer, SHOP, web.challenges);
    t.diagnostic(`account → certificate: ${Math.round(performance.now() - started)} ms (new account key)`);

    assert.equal(issued.issuer, 'acme');
    const chain = splitPem(issued.certificatePem).map((pem) => new X509Certificate(pem));
    assert.equal(chain.length, 2, 'leaf and intermediate, no root');
    const [leaf, intermediate] = chain as [X509Certificate, X509Certificate];
    assert.equal(leaf.subjectAltName, `DNS:${SHOP}`);
    assert.equal(leaf.ca, false);
    assert.equal(intermediate.ca, true);
    assertChainsTo(chain, await pebble.rootPem());

    // The leaf's key: ECDSA P-256, PKCS#8 PEM, the public half the one in the certificate.
    assert.match(issued.privateKeyPem, /^-----BEGIN PRIVATE KEY-----\n[\s\S]+\n-----END PRIVATE KEY-----\n$/);
    const key = createPrivateKey(issued.privateKeyPem);
    assert.equal(key.asymmetricKeyType, 'ec');
    assert.equal(key.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    assert.equal(leaf.checkPrivateKey(key), true);
    assert.deepEqual(
      leaf.publicKey.export({ type: 'spki', format: 'der' }),
      createPublicKey(key).export({ type: 'spki', format: 'der' }),
    );

    assert.ok(issued.notBefore instanceof Date && issued.notAfter instanceof Date);
    assert.equal(issued.notBefore.getTime(), leaf.validFromDate.getTime());
    assert.equal(issued.notAfter.getTime(), leaf.validToDate.getTime());
    assert.ok(issued.notAfter > issued.notBefore);
    assert.ok(issued.notBefore.getTime() <= Date.now() + 60_000, 'valid from now, not later');

    // One answer stored for the hostname, fetched by Pebble for that hostname while it was there
    // (every fetch answered: nothing removed early), and removed afterwards.
    assert.equal(web.puts.length, 1);
    const [put] = web.puts;
    assert.equal(put?.hostname, SHOP);
    assert.match(put?.keyAuthorization ?? '', /^[\w-]+\.[\w-]{43}$/, 'token.thumbprint');
    assert.equal(put?.keyAuthorization.split('.')[0], put?.token);
    assert.ok(web.fetches.length >= 1, 'Pebble fetched the answer');
    assert.deepEqual(
      new Set(web.fetches.map((fetch) => `${fetch.host} ${fetch.token} ${fetch.status}`)),
      new Set([`${SHOP} ${put?.token} 200`]),
    );
    assert.equal(web.store.size, 0);

    assert.equal(accountKeys.length, 1);
    const accountKey = createPrivateKey(accountKeys[0] as string);
    assert.equal(accountKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');

    // The next certificate: same account key (not handed over again), new leaf key and serial.
    web.reset();
    const again = Date.now();
    const second = await obtainCertificate(issuer, SHOP, web.challenges);
    t.diagnostic(`account → certificate: ${Date.now() - again} ms (existing account)`);
    assert.equal(accountKeys.length, 1);
    const secondLeaf = new X509Certificate(splitPem(second.certificatePem)[0] as string);
    assert.notEqual(secondLeaf.serialNumber, leaf.serialNumber);
    assert.notEqual(second.privateKeyPem, issued.privateKeyPem);
    assert.equal(secondLeaf.subjectAltName, `DNS:${SHOP}`);
    assert.equal(web.store.size, 0);

    // A given account key is used as it is, and nothing is handed over.
    const given = newIssuer({
      accountKeyPem: accountKeys[0] as string,
      onAccountKey: async () => assert.fail('a given key is not handed over'),
    });
    const third = await obtainCertificate(given, SHOP, web.challenges);
    assert.equal(
      new X509Certificate(splitPem(third.certificatePem)[0] as string).subjectAltName,
      `DNS:${SHOP}`,
    );
  });

  for (const { hostname, why, detail } of [
    { hostname: `missing.${ZONE}`, why: 'a name DNS does not know', detail: /could not resolve URL/ },
    {
      hostname: `elsewhere.${ZONE}`,
      why: 'a name pointing where nothing answers',
      detail: /dial tcp 127\.0\.0\.2:\d+: connect: connection refused/,
    },
  ]) {
    it(`fails for good, quickly, when the CA cannot reach ${why}`, async () => {
      web.reset();
      const started = Date.now();
      const error = await rejection(obtainCertificate(newIssuer(), hostname, web.challenges));
      assert.ok(Date.now() - started < QUICK_FAILURE_MS, `failed after ${Date.now() - started} ms`);
      assert.equal(error.retryable, false);
      assert.equal(error.retryAfterMs, undefined);
      assert.ok(
        error.message.startsWith(`${hostname}: the ACME CA marked the authorization invalid (connection): `),
        error.message,
      );
      assert.match(error.message, detail);
      assert.equal(web.puts.length, 1, 'the answer was put up');
      assert.equal(web.store.size, 0, 'and taken down');
    });
  }

  it('fails for good when the answer served is not the key authorization', async () => {
    web.reset();
    const tampered: ChallengeStore = {
      put: (token, keyAuthorization, hostname) => web.challenges.put(token, `${keyAuthorization}x`, hostname),
      remove: (token) => web.challenges.remove(token),
    };
    const error = await rejection(obtainCertificate(newIssuer(), SHOP, tampered));
    assert.equal(error.retryable, false);
    assert.ok(
      error.message.startsWith(`${SHOP}: the ACME CA marked the authorization invalid (unauthorized): `),
      error.message,
    );
    assert.ok(web.fetches.length >= 1);
    assert.equal(web.store.size, 0);
  });

  it("does not trust the CA's HTTPS without its caPem (nothing global was relaxed)", async () => {
    const error = await rejection(obtainCertificate(newIssuer({ caPem: undefined }), SHOP, web.challenges));
    // The operator's setting, not a refusal of the name: retried once the operator fixes it.
    assert.equal(error.retryable, true);
    assert.equal(
      error.message,
      `the ACME CA at ${new URL(pebble.directoryUrl).origin} presented a certificate this issuer does not trust (UNABLE_TO_VERIFY_LEAF_SIGNATURE): set its CA (caPem) or fix the directory URL`,
    );
  });

  // Last: it restarts Pebble (a new root, no accounts).
  it('fails for now while the CA is down, and issues again once it is back', async () => {
    const issuer = newIssuer();
    await obtainCertificate(issuer, SHOP, web.challenges);

    await pebble.stop();
    web.reset();
    const started = Date.now();
    const error = await rejection(obtainCertificate(issuer, SHOP, web.challenges));
    assert.ok(Date.now() - started < QUICK_FAILURE_MS, `failed after ${Date.now() - started} ms`);
    assert.equal(error.retryable, true);
    assert.equal(error.retryAfterMs, undefined);
    assert.equal(
      error.message,
      `the ACME CA at ${new URL(pebble.directoryUrl).origin} could not be reached (ECONNREFUSED)`,
    );
    assert.equal(web.puts.length, 0);

    // The same issuer again: the restarted Pebble has forgotten the account, so it is registered anew.
    await pebble.restart();
    const issued = await obtainCertificate(issuer, SHOP, web.challenges);
    const chain = splitPem(issued.certificatePem).map((pem) => new X509Certificate(pem));
    assert.equal(chain[0]?.subjectAltName, `DNS:${SHOP}`);
    assertChainsTo(chain, await pebble.rootPem());
    assert.equal(web.store.size, 0);
  });
});

/**
 * Answers Pebble cannot be made to give (it neither rate-limits nor fails on purpose): a loopback
 * server stands in for the CA's directory so the mapping of HTTP status and Retry-After is checked.
 */
describe('AcmeIssuer on a CA that is limiting or failing', () => {
  let server: Server;
  let base: string;
  const answers = new Map<string, { status: number; headers: Record<string, string>; body: string }>();

  before(async () => {
    server = createServer((request, response) => {
      const answer = answers.get(request.url ?? '');
      if (answer === undefined) return void response.writeHead(404).end();
      response.writeHead(answer.status, answer.headers).end(answer.body);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const issue = (path: string) => {
    const issuer = new AcmeIssuer({
      directoryUrl: `${base}${path}`,
      email: 'ops@example.test',
      polling: POLLING,
    });
    return rejection(
      obtainCertificate(issuer, SHOP, { put: async () => {}, remove: async () => {} }),
    ).finally(() => issuer.close());
  };
  const problem = (type: string, detail: string) =>
    JSON.stringify({ type: `urn:ietf:params:acme:error:${type}`, detail, status: 429 });

  it('429 rateLimited: retryable, after the seconds Retry-After gives', async () => {
    answers.set('/limited', {
      status: 429,
      headers: { 'content-type': 'application/problem+json', 'retry-after': '120' },
      body: problem('rateLimited', 'too many certificates already issued for "example.test"'),
    });
    const error = await issue('/limited');
    assert.equal(error.retryable, true);
    assert.equal(error.retryAfterMs, 120_000);
    assert.equal(
      error.message,
      `${SHOP}: the ACME CA answered 429 (rateLimited): too many certificates already issued for "example.test"`,
    );
  });

  it('503: retryable, until the HTTP date Retry-After gives', async () => {
    const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 90_000);
    answers.set('/maintenance', {
      status: 503,
      headers: { 'content-type': 'text/html', 'retry-after': at.toUTCString() },
      body: '<h1>down for maintenance</h1>',
    });
    const asked = Date.now();
    const error = await issue('/maintenance');
    const answered = Date.now();
    assert.equal(error.retryable, true);
    const wait = error.retryAfterMs ?? -1;
    assert.ok(wait >= at.getTime() - answered && wait <= at.getTime() - asked, `retryAfterMs ${wait}`);
    assert.equal(error.message, `${SHOP}: the ACME CA answered 503: <h1>down for maintenance</h1>`);
  });

  it('a 4xx problem is not retried', async () => {
    answers.set('/gone', {
      status: 403,
      headers: { 'content-type': 'application/problem+json', 'retry-after': '30' },
      body: JSON.stringify({ type: 'urn:ietf:params:acme:error:unauthorized', detail: 'no', status: 403 }),
    });
    const error = await issue('/gone');
    assert.equal(error.retryable, false);
    assert.equal(error.retryAfterMs, undefined);
    assert.equal(error.message, `${SHOP}: the ACME CA answered 403 (unauthorized): no`);
  });
});

interface ChallengeWeb {
  readonly port: number;
  readonly store: Map<string, { keyAuthorization: string; hostname: string }>;
  readonly challenges: ChallengeStore;
  /** Every put, in order. */
  readonly puts: { token: string; keyAuthorization: string; hostname: string }[];
  /** Every request under /.well-known/acme-challenge/, with the answer given. */
  readonly fetches: { host: string; token: string; status: number }[];
  reset(): void;
  close(): Promise<void>;
}

/** The part of the edge Pebble talks to: http-01 answers from the store, for the stored hostname only. */
async function startChallengeWeb(): Promise<ChallengeWeb> {
  const store = new Map<string, { keyAuthorization: string; hostname: string }>();
  const puts: ChallengeWeb['puts'] = [];
  const fetches: ChallengeWeb['fetches'] = [];
  const server = createServer((request, response) => {
    const token = /^\/\.well-known\/acme-challenge\/([\w-]+)$/.exec(request.url ?? '')?.[1];
    const host = (request.headers.host ?? '').replace(/:\d+$/, '');
    const entry = token === undefined ? undefined : store.get(token);
    const status = entry !== undefined && entry.hostname === host ? 200 : 404;
    if (token !== undefined) fetches.push({ host, token, status });
    response
      .writeHead(status, { 'content-type': 'text/plain' })
      .end(status === 200 ? entry?.keyAuthorization : '');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as { port: number }).port,
    store,
    puts,
    fetches,
    challenges: {
      async put(token, keyAuthorization, hostname) {
        puts.push({ token, keyAuthorization, hostname });
        store.set(token, { keyAuthorization, hostname });
      },
      async remove(token) {
        store.delete(token);
      },
    },
    reset() {
      puts.length = 0;
      fetches.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function splitPem(text: string): string[] {
  return text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

/** Each certificate is issued and signed by the next; the last by the (self-signed) root, which is not in the chain. */
function assertChainsTo(chain: readonly X509Certificate[], rootPem: string): void {
  const root = new X509Certificate(rootPem);
  assert.ok(root.checkIssued(root) && root.verify(root.publicKey), 'the root is self-signed');
  const path = [...chain, root];
  for (let i = 0; i < chain.length; i++) {
    const [child, parent] = [path[i] as X509Certificate, path[i + 1] as X509Certificate];
    assert.notEqual(child.fingerprint256, root.fingerprint256, 'the root is not part of the chain');
    assert.ok(child.checkIssued(parent), `${child.subject} issued by ${parent.subject}`);
    assert.ok(child.verify(parent.publicKey), `${child.subject} signed by ${parent.subject}`);
  }
}

async function rejection(promise: Promise<unknown>): Promise<IssuerError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof IssuerError, `an IssuerError, not ${String(error)}`);
    return error;
  }
  return assert.fail('expected the issuance to fail');
}
