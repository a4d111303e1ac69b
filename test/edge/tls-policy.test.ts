// @peculiar/x509 needs the Reflect metadata API before it loads.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { KeyObject, webcrypto, X509Certificate } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { type ConnectionOptions, checkServerIdentity, connect } from 'node:tls';
import * as x509 from '@peculiar/x509';
import { DefaultAddressCertificates } from '../../src/platform/certificates/default-addresses.ts';
import { closeAll } from '../support/cleanup.ts';
import { testDialects } from '../support/databases.ts';
import { startTestEdge, type TestEdge } from '../support/edge.ts';
import {
  type EdgeSite,
  internalCertificates,
  type LoopbackServer,
  recordingOrigin,
  startEdgeSite,
} from '../support/edge-site.ts';
import { tlsGet } from '../support/edge-tls.ts';

interface Handshake {
  readonly protocol: string | null;
  readonly cipher: string;
  readonly authorized: boolean;
  readonly peer: X509Certificate;
}

/** An RSA certificate (the internal CA issues ECDSA only), to check the RSA suites too. */
async function rsaCertificate(hostname: string) {
  const algorithm = {
    name: 'RSASSA-PKCS1-v1_5',
    hash: 'SHA-256',
    publicExponent: new Uint8Array([1, 0, 1]),
    modulusLength: 2048,
  };
  const keys = await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify']);
  const now = Date.now();
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: `CN=${hostname}`,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 86_400_000),
    signingAlgorithm: algorithm,
    keys,
    extensions: [new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: hostname }])],
  });
  return {
    certificatePem: certificate.toString('pem'),
    privateKeyPem: KeyObject.from(keys.privateKey).export({ type: 'pkcs8', format: 'pem' }) as string,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 86_400_000),
    issuer: 'test',
  };
}

/**
 * Issue 13: what the edge's TLS offers (ECDHE with AEAD only on TLS 1.2), what a handshake
 * without SNI or for an unknown name gets, projects' default addresses with certificates for
 * their own names, and the platform's own site staying on HTTP with the internal CA.
 */
for (const dialect of testDialects()) {
  describe(`the edge's TLS policy (${dialect})`, () => {
    let site: EdgeSite;
    let edge: TestEdge;
    let origin: LoopbackServer;
    let rootPem: string;
    let issued = 0;

    /** A bare TLS handshake with the edge; resolves with what was negotiated. */
    const handshake = (options: ConnectionOptions) =>
      new Promise<Handshake>((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port: edge.httpsPort, ca: rootPem, ...options }, () => {
          const result = {
            protocol: socket.getProtocol(),
            cipher: socket.getCipher().name,
            authorized: socket.authorized,
            peer: socket.getPeerX509Certificate() as X509Certificate,
          };
          socket.end();
          resolve(result);
        });
        socket.on('error', reject);
      });

    /** The handshake's identity is checked by the tests that care; this one reads the answer. */
    const get = (host: string, path: string, servername: string = host) =>
      tlsGet(edge.httpsPort, host, path, { ca: rootPem, servername, anyName: true });

    const plain = (host: string, path: string) =>
      new Promise<{ status: number; headers: Record<string, unknown> }>((resolve, reject) => {
        const req = httpRequest(
          { host: '127.0.0.1', port: edge.httpPort, path, headers: { host } },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
          },
        );
        req.on('error', reject);
        req.end();
      });

    before(async () => {
      origin = await recordingOrigin();
      site = await startEdgeSite(dialect, {
        now: true,
        projects: [
          { slug: 'petstore', name: 'P', originUrl: origin.url, title: 'T' },
          // Created, never deployed: not routed, so no certificate either.
          { slug: 'draft', name: 'D', originUrl: origin.url, document: false },
        ],
      });
      const { p } = site;
      const certificates = await internalCertificates(p);
      rootPem = certificates.rootPem;
      const counting = new DefaultAddressCertificates(p.ctx.db, 'platform.test', certificates.issuer);
      const issue = counting.issue.bind(counting);
      counting.issue = (host) => {
        issued++;
        return issue(host);
      };
      await certificates.store.save(
        'rsa.example.test',
        await rsaCertificate('rsa.example.test'),
        p.clock.now(),
      );
      edge = await startTestEdge(p, { ...certificates, defaultAddresses: counting });
    });

    after(() => closeAll(edge, origin, site));

    it('offers TLS 1.2 with ECDHE and AEAD ciphers only: no CBC, no RSA key exchange', async () => {
      const tls12 = { servername: 'platform.test', maxVersion: 'TLSv1.2' } as const;
      // The internal CA's certificates are ECDSA.
      for (const ciphers of [
        'AES128-SHA',
        'ECDHE-RSA-AES128-SHA',
        'ECDHE-ECDSA-AES128-SHA',
        'ECDHE-ECDSA-AES256-SHA384',
        'ECDHE-ECDSA-AES128-SHA256',
      ]) {
        await assert.rejects(handshake({ ...tls12, ciphers }), /handshake failure/, ciphers);
      }
      for (const ciphers of ['ECDHE-ECDSA-AES128-GCM-SHA256', 'ECDHE-ECDSA-CHACHA20-POLY1305']) {
        const done = await handshake({ ...tls12, ciphers });
        assert.deepEqual([done.protocol, done.cipher, done.authorized], ['TLSv1.2', ciphers, true]);
      }
      // The server's order wins: a client preferring CBC still gets GCM.
      const ordered = await handshake({
        ...tls12,
        ciphers: 'ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-GCM-SHA256',
      });
      assert.equal(ordered.cipher, 'ECDHE-ECDSA-AES128-GCM-SHA256');
      // TLS 1.3 by default.
      assert.equal((await handshake({ servername: 'platform.test' })).protocol, 'TLSv1.3');
    });

    it('applies the same suites to a certificate chosen by SNI, RSA ones included', async () => {
      const rsa = {
        servername: 'rsa.example.test',
        maxVersion: 'TLSv1.2',
        rejectUnauthorized: false,
      } as const;
      for (const ciphers of [
        'AES128-SHA',
        'AES128-GCM-SHA256',
        'AES256-GCM-SHA384',
        'ECDHE-RSA-AES128-SHA',
      ]) {
        await assert.rejects(handshake({ ...rsa, ciphers }), /handshake failure/, ciphers);
      }
      const done = await handshake({ ...rsa, ciphers: 'ECDHE-RSA-AES128-GCM-SHA256' });
      assert.equal(done.cipher, 'ECDHE-RSA-AES128-GCM-SHA256');
      assert.equal(done.peer.subjectAltName, 'DNS:rsa.example.test');
    });

    it('refuses TLS 1.1 and 1.0', async () => {
      for (const version of ['TLSv1', 'TLSv1.1'] as const) {
        await assert.rejects(
          handshake({
            servername: 'platform.test',
            minVersion: version,
            maxVersion: version,
            // The client's own OpenSSL would not even offer them at its default security level.
            ciphers: 'DEFAULT@SECLEVEL=0',
          }),
          /unsupported protocol|protocol version/,
          version,
        );
      }
    });

    it("answers a handshake without SNI, or for an unknown name, with the platform domain's certificate", async () => {
      // 127.0.0.1 as host: Node sends no SNI. The chain verifies; the name is the platform's.
      const bare = await handshake({ checkServerIdentity: () => undefined });
      assert.equal(bare.authorized, true);
      assert.equal(bare.peer.subjectAltName, 'DNS:platform.test');
      assert.equal(checkServerIdentity('platform.test', bare.peer.toLegacyObject()), undefined);

      const unknown = await handshake({
        servername: 'unknown.example',
        checkServerIdentity: () => undefined,
      });
      assert.equal(unknown.peer.subjectAltName, 'DNS:platform.test');
      assert.ok(checkServerIdentity('unknown.example', unknown.peer.toLegacyObject()) instanceof Error);
      // A client that checks the name (every browser) stops there.
      await assert.rejects(
        handshake({ servername: 'unknown.example' }),
        /ERR_TLS_CERT_ALTNAME_INVALID|does not match/,
      );
      // One that goes on reaches nothing.
      const answer = await get('unknown.example', '/');
      assert.equal(answer.status, 404);
      assert.equal((JSON.parse(answer.text) as { code: string }).code, 'host_not_found');
    });

    it("gives a project's default address a certificate for its own name, from the internal CA", async () => {
      const before = issued;
      const first = await handshake({ servername: 'petstore.platform.test' });
      assert.equal(first.authorized, true);
      assert.equal(first.peer.subjectAltName, 'DNS:petstore.platform.test');
      assert.ok(first.peer.checkIssued(new X509Certificate(rootPem)));
      const answer = await get('petstore.platform.test', '/api/pets?x=1');
      assert.deepEqual([answer.status, JSON.parse(answer.text)], [200, { url: '/pets?x=1' }]);
      assert.equal(answer.peer.serialNumber, first.peer.serialNumber, 'issued once, then served from memory');
      assert.equal(issued - before, 1);
      // Plain HTTP to the default address stays served: the certificate is not a stored one.
      assert.equal((await plain('petstore.platform.test', '/api/pets')).status, 200);
    });

    it('mints nothing for names that are not a published default address', async () => {
      const before = issued;
      for (const servername of [
        'nosuch.platform.test',
        'draft.platform.test',
        'a.petstore.platform.test',
        'petstore.platform.test.evil.example',
      ]) {
        const done = await handshake({ servername, checkServerIdentity: () => undefined });
        assert.equal(done.peer.subjectAltName, 'DNS:platform.test', servername);
      }
      assert.equal(issued, before);
    });

    it("keeps the platform's own site on plain HTTP without HSTS while its certificate is the internal default", async () => {
      const http = await plain('platform.test', '/api/v1/openapi.json');
      assert.equal(http.status, 200);
      const https = await get('platform.test', '/api/v1/openapi.json');
      assert.equal(https.status, 200);
      assert.equal(https.headers['strict-transport-security'], undefined);
    });
  });
}
