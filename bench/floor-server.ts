import { randomBytes } from 'node:crypto';
import http from 'node:http';
import express from 'express';
import pg from 'pg';

/**
 * The floors Quire is measured against: the SQL it runs, as prepared statements, answering
 * `{"data": …}`, with no tenancy, authentication, permissions, validation or hooks.
 *
 *   GET /api/resource/ToDo/<name>  -> GET_SQL with [name]
 *   GET /api/resource/ToDo?…       -> LIST_SQL with LIST_VALUES
 *   POST /api/resource/ToDo        -> INSERT_SQL with [random name, description, priority], in a transaction
 *   PUT /api/resource/ToDo/<name>  -> UPDATE_SQL with [name, description], in a transaction
 *
 * FLOOR=bare (node:http, the floor) or FLOOR=express (express 5 with two routes: what the framework
 * alone costs on top).
 */
const { DATABASE_URL, PORT, GET_SQL, LIST_SQL, LIST_VALUES, INSERT_SQL, UPDATE_SQL, FLOOR } = process.env;
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 10 });
const listValues = JSON.parse(LIST_VALUES ?? '[]') as unknown[];
const PREFIX = '/api/resource/ToDo';

const getOne = (name: string) => pool.query({ name: 'floor_get', text: GET_SQL ?? '', values: [name] }).then((r) => ({ data: r.rows[0] as unknown }));
const getList = () => pool.query({ name: 'floor_list', text: LIST_SQL ?? '', values: listValues }).then((r) => ({ data: r.rows }));

/** One statement in its own transaction, as a write is. */
async function inTransaction(name: string, text: string, values: unknown[]): Promise<{ data: unknown }> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await client.query({ name, text, values });
    await client.query('COMMIT');
    return { data: result.rows[0] as unknown };
  } catch (e) {
    await client.query('ROLLBACK');
    throw e;
  } finally {
    client.release();
  }
}

async function readBody(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
}

const insert = (doc: Record<string, unknown>) =>
  inTransaction('floor_insert', INSERT_SQL ?? '', [randomBytes(5).toString('hex'), doc.description ?? null, doc.priority ?? 'Medium']);
const update = (name: string, doc: Record<string, unknown>) => inTransaction('floor_update', UPDATE_SQL ?? '', [name, doc.description ?? null]);

function bare(): http.Server {
  return http.createServer((req, res) => {
    const url = req.url ?? '';
    const name = url.startsWith(`${PREFIX}/`) ? decodeURIComponent(url.slice(PREFIX.length + 1).split('?')[0] ?? '') : undefined;
    const work =
      req.method === 'POST'
        ? readBody(req).then(insert)
        : req.method === 'PUT'
          ? readBody(req).then((doc) => update(name ?? '', doc))
          : name !== undefined
            ? getOne(name)
            : getList();
    work.then(
      (body) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(body));
      },
      () => {
        res.writeHead(500);
        res.end();
      },
    );
  });
}

function withExpress(): http.Server {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.get(PREFIX, async (_req, res) => {
    res.json(await getList());
  });
  app.get(`${PREFIX}/:name`, async (req, res) => {
    res.json(await getOne(req.params.name));
  });
  app.use(express.json());
  app.post(PREFIX, async (req, res) => {
    res.json(await insert(req.body as Record<string, unknown>));
  });
  app.put(`${PREFIX}/:name`, async (req, res) => {
    res.json(await update(req.params.name, req.body as Record<string, unknown>));
  });
  return http.createServer(app);
}

const server = FLOOR === 'express' ? withExpress() : bare();
server.keepAliveTimeout = 65_000;
server.listen(Number(PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening on port ${typeof address === 'object' && address ? address.port : ''}\n`);
});
// Exit (rather than die) on SIGTERM, so `node --cpu-prof` writes its profile.
process.on('SIGTERM', () => process.exit(0));
