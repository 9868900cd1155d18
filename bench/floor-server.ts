import http from 'node:http';
import express from 'express';
import pg from 'pg';

/**
 * The floors Quire's reads are measured against: exactly the SQL Quire runs, as prepared statements,
 * answering `{"data": …}`, with no tenancy, authentication, permissions or validation.
 *
 *   GET /api/resource/ToDo/<name>  -> GET_SQL with [name]
 *   GET /api/resource/ToDo?…       -> LIST_SQL with LIST_VALUES
 *
 * FLOOR=bare (node:http, the floor) or FLOOR=express (express 5 with two routes: what the framework
 * alone costs on top).
 */
const { DATABASE_URL, PORT, GET_SQL, LIST_SQL, LIST_VALUES, FLOOR } = process.env;
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 10 });
const listValues = JSON.parse(LIST_VALUES ?? '[]') as unknown[];
const PREFIX = '/api/resource/ToDo';

const getOne = (name: string) => pool.query({ name: 'floor_get', text: GET_SQL ?? '', values: [name] }).then((r) => ({ data: r.rows[0] as unknown }));
const getList = () => pool.query({ name: 'floor_list', text: LIST_SQL ?? '', values: listValues }).then((r) => ({ data: r.rows }));

function bare(): http.Server {
  return http.createServer((req, res) => {
    const url = req.url ?? '';
    const work = url.startsWith(`${PREFIX}/`) ? getOne(decodeURIComponent(url.slice(PREFIX.length + 1).split('?')[0] ?? '')) : getList();
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
