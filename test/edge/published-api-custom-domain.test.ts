import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import createClient from 'openapi-fetch';
import { Agent, fetch as undiciFetch } from 'undici';
import { parseSealingKey } from '../../src/lib/sealed-box.ts';
import { petstoreDocument } from '../../src/petstore/index.ts';
import { obtainDueCertificates } from '../../src/platform/certificates/certificate-job.ts';
import { CertificateStore, databaseChallenges } from '../../src/platform/certificates/certificate-store.ts';
import { InternalIssuer } from '../../src/platform/certificates/internal-issuer.ts';
import { addDomain } from '../../src/platform/domains/add-domain.ts';
import { verifyDomain } from '../../src/platform/domains/verify-domain.ts';
import { deployProject } from '../../src/platform/projects/deploys.ts';
import { createProject } from '../../src/platform/projects/projects.ts';
import { testDialects } from '../support/databases.ts';
import { startDns, type TestDns } from '../support/dns.ts';
import { startTestEdge, type TestEdge } from '../support/edge.ts';
import { startPetstore, TEST_DEPRECATION, type TestPetstore } from '../support/petstore.ts';
import { seedTeam, startPlatformContext, type TestPlatform } from '../support/platform.ts';

const KEY = parseSealingKey(`cd:${Buffer.alloc(32, 6).toString('base64')}`);
const DOMAIN = 'shop.example.test';

/**
 * Issue 14: a client generated from the published document works on a custom domain too. The
 * domain is made live as a team makes it (added, its CNAME in DNS, verified, its certificate
 * issued by the certificate job), then a client built from the document the domain publishes
 * walks the Petstore over HTTPS at `https://shop.example.test:<port>/api`, following the
 * Location, next-page and successor links as given, on a connection that checks the domain's
 * own certificate.
 */
for (const dialect of testDialects()) {
  describe(`a published API on a live custom domain (${dialect})`, () => {
    let dns: TestDns;
    let p: TestPlatform;
    let petstore: TestPetstore;
    let edge: TestEdge;
    let rootPem: string;

    before(async () => {
      dns = await startDns({ zones: ['example.test', 'platform.test'] });
      await dns.setRecords('platform.test', [{ name: 'petstore', type: 'A', value: '127.0.0.1' }]);
      await dns.setRecords('example.test', [
        { name: 'shop', type: 'CNAME', value: 'petstore.platform.test' },
      ]);
      p = await startPlatformContext(dialect, { DNS_SERVERS: dns.servers.join(',') });
      // The client checks certificates against the real time: they are issued for now.
      p.clock.set(Date.now());
      const store = new CertificateStore(p.ctx.db, [KEY]);
      const ca = await store.internalCa(p.clock.now());
      rootPem = ca.certificatePem;
      const issuer = new InternalIssuer(ca);
      petstore = await startPetstore(dialect);
      const { owner, team } = await seedTeam(p.ctx, 'enterprise');
      await createProject(p.ctx, owner, {
        teamId: team.id,
        slug: 'petstore',
        name: 'Petstore',
        originUrl: await petstore.listen(),
      });
      await deployProject(p.ctx, owner, 'petstore', {
        document: JSON.stringify(petstoreDocument(TEST_DEPRECATION)),
      });
      edge = await startTestEdge(p, { store, defaultCertificate: await issuer.issue('platform.test') });

      await addDomain(p.ctx, owner, 'petstore', DOMAIN);
      const verified = await verifyDomain(p.ctx, owner, 'petstore', DOMAIN);
      assert.equal(verified.domain.state, 'verified');
      const issued = await obtainDueCertificates(p.ctx, {
        issuer,
        store,
        challenges: databaseChallenges(p.ctx.db, () => p.clock.now()),
        nodeId: 'test',
        leaseMs: 60_000,
      });
      assert.deepEqual(issued, [DOMAIN]);
    });

    after(async () => {
      await edge?.close();
      await petstore?.close();
      await p?.close();
      await dns?.stop();
    });

    /**
     * undici's fetch reaching every name on loopback (as the domain's DNS would) and trusting only
     * the internal root: the name in the URL is checked against the certificate served.
     */
    const loopbackFetch = () => {
      const agent = new Agent({
        connect: {
          ca: rootPem,
          lookup: (_host, options, callback) =>
            options.all
              ? callback(null, [{ address: '127.0.0.1', family: 4 }])
              : callback(null, '127.0.0.1', 4),
        },
      });
      return async (input: Request): Promise<Response> => {
        const body = input.body ? await input.arrayBuffer() : undefined;
        const answer = await undiciFetch(input.url, {
          method: input.method,
          headers: [...input.headers],
          ...(body && { body }),
          dispatcher: agent,
          redirect: 'manual',
        });
        return answer as unknown as Response;
      };
    };

    it('a client built from the document the domain publishes walks the Petstore over HTTPS', async () => {
      const site = `https://${DOMAIN}:${edge.httpsPort}`;
      const fetch = loopbackFetch();
      const documentUrl = `${site}/openapi.json`;
      const published = await fetch(new Request(documentUrl));
      assert.equal(published.status, 200, 'the domain serves the published document itself');
      const document = (await published.json()) as { servers: { url: string }[] };
      const baseUrl = new URL(document.servers[0]?.url ?? '', documentUrl).href;
      assert.equal(baseUrl, `${site}/api`);
      const client = createClient({
        baseUrl,
        fetch,
        headers: { authorization: `Bearer ${petstore.adminKey}` },
      });
      /** A link as the API gives it, resolved against the address it came from, with the key. */
      const follow = async (target: string, from: string) => {
        const url = new URL(target, from);
        assert.equal(url.origin, site, `${target} stays on the custom domain`);
        return fetch(new Request(url, { headers: { authorization: `Bearer ${petstore.adminKey}` } }));
      };

      const category = await client.POST('/categories' as never, { body: { name: 'Dogs' } } as never);
      assert.equal(category.response.status, 201);
      const categoryId = (category.data as unknown as { id: number }).id;
      const created = await client.POST('/pets' as never, { body: { name: 'Rex', categoryId } } as never);
      assert.equal(created.response.status, 201);
      const pet = created.data as unknown as { id: number };
      const location = created.response.headers.get('location') ?? '';
      assert.equal(location, `/api/pets/${pet.id}`);
      // The Location leads to the pet (the deprecated read), whose successor link leads on.
      const read = await follow(location, created.response.url);
      assert.equal(read.status, 200);
      assert.equal(((await read.json()) as { id: number }).id, pet.id);
      assert.ok(read.headers.get('deprecation'), 'the lifecycle headers reach the custom domain');
      const successor =
        /<([^>]+)>;\s*rel="successor-version"/.exec(read.headers.get('link') ?? '')?.[1] ?? '';
      assert.equal(successor, `/api/pets?id=${pet.id}`);
      const bySuccessor = await follow(successor, read.url);
      assert.equal(bySuccessor.status, 200);
      assert.deepEqual(
        ((await bySuccessor.json()) as { id: number }[]).map((p) => p.id),
        [pet.id],
      );

      const stocked = await client.PUT(
        '/store/inventory/{petId}' as never,
        { params: { path: { petId: pet.id } }, body: { quantity: 3 } } as never,
      );
      assert.equal(stocked.response.status, 200);
      assert.deepEqual(stocked.data, { petId: pet.id, quantity: 3, status: 'available' });
      const order = await client.POST(
        '/store/orders' as never,
        {
          body: { petId: pet.id, quantity: 2 },
          headers: { 'idempotency-key': 'walk-custom-domain' },
        } as never,
      );
      assert.equal(order.response.status, 201);
      const orderLocation = order.response.headers.get('location') ?? '';
      assert.match(orderLocation, /^\/api\/store\/orders\/\d+$/);
      const placed = await follow(orderLocation, order.response.url);
      assert.equal(placed.status, 200);
      assert.deepEqual(await placed.json(), {
        id: (order.data as unknown as { id: number }).id,
        petId: pet.id,
        quantity: 2,
        complete: false,
      });
      const stock = await client.GET(
        '/store/inventory/{petId}' as never,
        { params: { path: { petId: pet.id } } } as never,
      );
      assert.deepEqual(stock.data, { petId: pet.id, quantity: 1, status: 'available' });

      // Pages: the next link, followed as given, lands on the next page.
      await client.POST('/pets' as never, { body: { name: 'Fido', categoryId } } as never);
      const first = await client.GET('/pets' as never, { params: { query: { limit: 1 } } } as never);
      assert.equal(first.response.status, 200);
      const next = /<([^>]+)>;\s*rel="next"/.exec(first.response.headers.get('link') ?? '')?.[1] ?? '';
      assert.match(next, /^\/api\/pets\?/);
      const second = await follow(next, first.response.url);
      assert.equal(second.status, 200);
      const [firstPet] = first.data as unknown as { id: number }[];
      const [secondPet] = (await second.json()) as { id: number }[];
      assert.ok(firstPet && secondPet && secondPet.id > firstPet.id, 'the next page follows the first');
    });
  });
}
