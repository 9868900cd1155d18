import { generateKeys, insertDoc } from '@quire/documents';
import { makePrincipal } from '@quire/permissions';
import { listStatement, type CompiledList } from '@quire/query';
import { createRuntime, loadRuntimeConfig } from '@quire/runtime';
import { createTenant } from '@quire/tenancy';

/** The list every read benchmark requests: five fields, two filters, newest first, a page of 20. */
export const LIST_QUERY = {
  fields: JSON.stringify(['name', 'status', 'priority', 'date', 'description']),
  filters: JSON.stringify([
    ['status', '=', 'Open'],
    ['date', '>=', '2025-06-01'],
  ]),
  order_by: 'modified desc',
  limit_page_length: '20',
};

export const LIST_PATH = `/api/resource/ToDo?${new URLSearchParams(LIST_QUERY).toString()}`;

/** The System Manager user the benchmarks read as (access from DocPerm, not Administrator). */
export const CLERK = { email: 'clerk@example.com', password: 'bench-clerk-password-1' };

export interface SeededTodos {
  /** 1,000 names picked at random, for GET by name. */
  names: string[];
  /** The SQL Quire runs for GET one ToDo, and for the list as the clerk: what the floors run. */
  getSql: string;
  list: CompiledList;
  /** The ToDo table (qualified) and its columns as SQL identifiers, for the floors' writes. */
  table: string;
  columns: string[];
  tokens: { clerk: string; admin: string };
  /** Closes the seeding runtime (left open for more seeding through `platform`). */
  close(): Promise<void>;
  platform: Awaited<ReturnType<typeof createRuntime>>['platform'];
}

/**
 * A tenant (`bench` unless named) with `rows` ToDos (one inserted through the document lifecycle, the rest copied
 * from it in SQL: 100,000 API inserts would take minutes), an index on `modified` (the list orders by
 * it: both sides then read ~80 rows, not all), and the clerk with an API key and a password.
 */
export async function seedTodos(env: NodeJS.ProcessEnv, rows: number, tenantName = 'bench'): Promise<SeededTodos> {
  const rt = await createRuntime({ config: loadRuntimeConfig({ ...process.env, ...env }), name: 'quire-bench' });
  try {
    const tenant = await createTenant(rt.platform, { name: tenantName });
    const registered = rt.platform.tenants.get(tenantName);
    if (!registered) throw new Error(`tenant ${tenantName} was not registered`);
    const admin = makePrincipal('Administrator', ['Administrator', 'System Manager']);
    const ctx = await rt.platform.context(registered, admin);
    await insertDoc(ctx, 'User', { email: CLERK.email, first_name: 'Clerk', new_password: CLERK.password, roles: [{ role: 'System Manager' }] });
    const clerk = await rt.db.transaction((tx) => generateKeys(tx, ctx, CLERK.email, 'Administrator'));
    const meta = ctx.meta.require('ToDo');
    await insertDoc(ctx, 'ToDo', { description: 'template', priority: 'Medium', date: '2025-01-01' });
    const columns = meta.columns.map((c) => c.sql);
    const computed: Record<string, string> = {
      '"name"': `substr(md5(i::text), 1, 10)`,
      '"description"': `'todo ' || i`,
      '"status"': `(ARRAY['Open','Closed','Cancelled'])[1 + i % 3]`,
      '"priority"': `(ARRAY['High','Medium','Low'])[1 + i % 3]`,
      '"date"': `DATE '2025-01-01' + (i % 700)`,
      '"creation"': `TIMESTAMP '2025-01-01' + i * INTERVAL '1 minute'`,
      '"modified"': `TIMESTAMP '2025-01-01' + i * INTERVAL '1 minute'`,
    };
    const select = columns.map((c) => computed[c] ?? c).join(', ');
    await rt.db.query(
      `INSERT INTO ${meta.table} (${columns.join(', ')}) SELECT ${select} FROM ${meta.table} t, generate_series(1, ${rows}) AS i WHERE t."description" = 'template'`,
    );
    await rt.db.query(`DELETE FROM ${meta.table} WHERE "description" = 'template'`);
    await rt.db.query(`CREATE INDEX IF NOT EXISTS bench_todo_modified ON ${meta.table} ("modified")`);
    await rt.db.query(`ANALYZE ${meta.table}`);
    const picked = await rt.db.query<{ name: string }>(`SELECT "name" FROM ${meta.table} ORDER BY random() LIMIT 1000`);
    const clerkPrincipal = makePrincipal(CLERK.email, ['System Manager', 'All']);
    return {
      names: picked.rows.map((r) => r.name),
      getSql: `SELECT ${columns.join(', ')} FROM ${meta.table} WHERE "name" = $1`,
      table: meta.table,
      columns,
      list: listStatement(LIST_QUERY, { meta, tenant: ctx.meta, principal: clerkPrincipal, maxPageLength: 1000 }),
      tokens: { clerk: `token ${clerk.api_key}:${clerk.api_secret}`, admin: `token ${tenant.api_key}:${tenant.api_secret}` },
      platform: rt.platform,
      close: () => rt.close(),
    };
  } catch (e) {
    await rt.close();
    throw e;
  }
}
