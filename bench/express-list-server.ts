import express from 'express';
import pg from 'pg';

/**
 * A second reference point: express 5 with one route running the same prepared SQL as the bare
 * handler. The gap between this and the bare handler is express' own cost; the gap between this and
 * Quire is ours (tenancy, authentication, parameters, compilation, serialisation).
 */
const { DATABASE_URL, PORT, SQL_TEXT, SQL_VALUES } = process.env;
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 10 });
const values = JSON.parse(SQL_VALUES ?? '[]') as unknown[];

const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.get('/api/resource/ToDo', async (_req, res) => {
  const result = await pool.query({ name: 'bench_list', text: SQL_TEXT ?? '', values });
  res.json({ data: result.rows });
});
const server = app.listen(Number(PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`listening on port ${typeof address === 'object' && address ? address.port : ''}\n`);
});
server.keepAliveTimeout = 65_000;
