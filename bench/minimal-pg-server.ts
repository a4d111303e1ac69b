import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import pg from 'pg';

/**
 * The PostgreSQL anchor (issue 16): the least a Node.js service on `pg` does for each benchmarked
 * request, with no framework, validation, authentication or rate limit. It runs on the Petstore's
 * own database (same tables, same seeded rows), so a read answers the same body as the Petstore:
 *
 * - `GET /pets/{id}`: one `SELECT` by primary key;
 * - `GET /pets`: one `SELECT … ORDER BY id LIMIT 20` (the first page);
 * - `POST /store/orders`: `BEGIN; UPDATE inventory … WHERE quantity >= $n RETURNING; INSERT INTO
 *   orders …; COMMIT` on one pooled connection, per request.
 *
 * Queries go as `pg` sends them by default (parameterized, unnamed statements), through a pool of
 * the Petstore's size. Run as its own process, pinned like the server under test:
 *
 *   PORT=4100 DATABASE_URL=postgres://… node bench/minimal-pg-server.ts
 */
const INT8_OID = 20;
const JSON_TYPE = 'application/json; charset=utf-8';

const READ_PET =
  'SELECT p.id, p.name, p.category_id, i.status FROM pets p JOIN inventory i ON i.pet_id = p.id WHERE p.id = $1';
const LIST_PETS =
  'SELECT p.id, p.name, p.category_id, i.status FROM pets p JOIN inventory i ON i.pet_id = p.id ORDER BY p.id LIMIT 20';
const TAKE_STOCK =
  'UPDATE inventory SET quantity = quantity - $2, reserved = reserved + $2, version = version + 1 WHERE pet_id = $1 AND quantity >= $2 RETURNING quantity';
const INSERT_ORDER =
  'INSERT INTO orders (pet_id, quantity, ship_date, complete, created_at) VALUES ($1, $2, NULL, false, $3) RETURNING id';

interface PetRow {
  id: number;
  name: string;
  category_id: number;
  status: string;
}

const petJson = (r: PetRow) => ({ id: r.id, name: r.name, categoryId: r.category_id, status: r.status });

export function minimalHandler(pool: pg.Pool): (req: IncomingMessage, res: ServerResponse) => void {
  const send = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, {
      'content-type': JSON_TYPE,
      'content-length': String(Buffer.byteLength(body)),
      ...headers,
    });
    res.end(body);
  };
  const fail = (res: ServerResponse, error: Error) =>
    send(res, 500, JSON.stringify({ code: 'internal_error', message: error.message, status: 500 }));

  const readPet = (res: ServerResponse, id: number) => {
    pool.query<PetRow>(READ_PET, [id]).then(
      ({ rows: [row] }) => {
        if (!row) return send(res, 404, '{"code":"pet_not_found","message":"No such pet.","status":404}');
        send(res, 200, JSON.stringify(petJson(row)));
      },
      (error: Error) => fail(res, error),
    );
  };

  const listPets = (res: ServerResponse) => {
    pool.query<PetRow>(LIST_PETS).then(
      ({ rows }) => send(res, 200, JSON.stringify(rows.map(petJson))),
      (error: Error) => fail(res, error),
    );
  };

  const placeOrder = async (res: ServerResponse, input: { petId: number; quantity: number }) => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const stock = await client.query(TAKE_STOCK, [input.petId, input.quantity]);
      if (stock.rowCount === 0) {
        await client.query('ROLLBACK');
        return send(res, 409, '{"code":"insufficient_stock","message":"Not enough stock.","status":409}');
      }
      const { rows } = await client.query<{ id: number }>(INSERT_ORDER, [
        input.petId,
        input.quantity,
        new Date().toISOString(),
      ]);
      await client.query('COMMIT');
      const id = rows[0]?.id as number;
      send(res, 201, JSON.stringify({ id, petId: input.petId, quantity: input.quantity, complete: false }), {
        location: `/store/orders/${id}`,
      });
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      fail(res, error as Error);
    } finally {
      client.release();
    }
  };

  return (req, res) => {
    const url = req.url ?? '/';
    if (req.method === 'GET' && url === '/pets') return listPets(res);
    if (req.method === 'GET' && url.startsWith('/pets/')) {
      const id = Number(url.slice('/pets/'.length));
      if (Number.isSafeInteger(id) && id > 0) return readPet(res, id);
    }
    if (req.method === 'POST' && url === '/store/orders') {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        let input: { petId: number; quantity: number };
        try {
          input = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return send(
            res,
            400,
            '{"code":"malformed_json","message":"The body is not valid JSON.","status":400}',
          );
        }
        void placeOrder(res, input);
      });
      return;
    }
    // The readiness probe and anything else.
    send(res, 404, '{"code":"route_not_found","message":"Not a benchmarked URL.","status":404}');
  };
}

function main(): void {
  const url = process.env.DATABASE_URL;
  if (!url) {
    console.error('DATABASE_URL must name the Petstore database on PostgreSQL');
    process.exit(2);
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: Number(process.env.POOL_SIZE ?? 10),
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as never,
    },
  });
  pool.on('error', () => {});
  const server = createServer(minimalHandler(pool));
  const shutdown = () => {
    server.close(() => void pool.end().finally(() => process.exit(0)));
    server.closeAllConnections();
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
  server.listen(Number(process.env.PORT ?? 4100), process.env.HOST ?? '127.0.0.1');
}

if (import.meta.main) main();
