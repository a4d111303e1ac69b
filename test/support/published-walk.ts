import assert from 'node:assert/strict';
import createClient from 'openapi-fetch';
import { Agent, fetch as undiciFetch } from 'undici';

/**
 * undici's fetch reaching every name on loopback (as the names' DNS would) and trusting only the
 * given root: the name in the URL is checked against the certificate the edge serves.
 */
export function loopbackFetch(
  rootPem: string,
  { http2 = false }: { http2?: boolean } = {},
): (input: Request) => Promise<Response> {
  const agent = new Agent({
    // undici offers h2 by ALPN unless told not to: each walk says which protocol it means.
    allowH2: http2,
    connect: {
      ca: rootPem,
      lookup: (_host, options, callback) =>
        options.all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4),
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
}

/**
 * The Petstore walk of a client built from the document a site publishes (openapi-fetch, its base
 * URL from the document's `servers`): category, pet, the Location, the deprecated read and its
 * successor link, stock, an order and its Location, and the next page, every link followed as
 * given and required to stay on `site`.
 */
export async function walkPetstore(options: {
  site: string;
  fetch: (input: Request) => Promise<Response>;
  adminKey: string;
  /** Distinct per walk on one Petstore: names and the order's idempotency key. */
  tag: string;
}): Promise<void> {
  const { site, fetch, adminKey, tag } = options;
  const documentUrl = `${site}/openapi.json`;
  const published = await fetch(new Request(documentUrl));
  assert.equal(published.status, 200, 'the site serves the published document itself');
  const document = (await published.json()) as { servers: { url: string }[] };
  // The first server is the site's absolute HTTPS address; the second, the same relative to the
  // document, serves a client that fetched it over HTTP.
  const https = new URL(site).protocol === 'https:';
  const siteApi = new URL(document.servers[0]?.url ?? '');
  assert.deepEqual(
    [siteApi.protocol, siteApi.hostname, siteApi.pathname],
    ['https:', new URL(site).hostname, '/api'],
  );
  const baseUrl = new URL(document.servers[https ? 0 : 1]?.url ?? '', documentUrl).href;
  assert.equal(baseUrl, `${site}/api`);
  const client = createClient({ baseUrl, fetch, headers: { authorization: `Bearer ${adminKey}` } });
  /** A link as the API gives it, resolved against the address it came from, with the key. */
  const follow = async (target: string, from: string) => {
    const url = new URL(target, from);
    assert.equal(url.origin, site, `${target} stays on the site`);
    return fetch(new Request(url, { headers: { authorization: `Bearer ${adminKey}` } }));
  };

  const category = await client.POST('/categories' as never, { body: { name: `Dogs ${tag}` } } as never);
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
  const successor = /<([^>]+)>;\s*rel="successor-version"/.exec(read.headers.get('link') ?? '')?.[1] ?? '';
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
      headers: { 'idempotency-key': `walk-${tag}` },
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
}
