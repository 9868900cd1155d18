import http from 'node:http';
import pg from 'pg';

/**
 * The baseline the benchmark compares Quire with: node:http + pg running exactly the SQL Quire's
 * list compiler produces for `GET /api/resource/ToDo?limit=20`, as a prepared statement, and
 * answering `{"data": rows}`. No routing, tenancy, auth or validation: the floor for this query.
 */
const { DATABASE_URL, PORT, SQL_TEXT, SQL_VALUES } = process.env;
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 10 });
const values = JSON.parse(SQL_VALUES ?? '[]') as unknown[];

const server = http.createServer((_req, res) => {
  pool.query({ name: 'bench_list', text: SQL_TEXT ?? '', values }).then(
    (result) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ data: result.rows }));
    },
    () => {
      res.writeHead(500);
      res.end();
    },
  );
});
server.keepAliveTimeout = 65_000;
server.listen(Number(PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening on port ${typeof address === 'object' && address ? address.port : ''}\n`);
});
