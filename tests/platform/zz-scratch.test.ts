import { afterAll, beforeAll, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server';
let server: TestServer;
beforeAll(async () => { server = await startTestServer(); });
afterAll(() => server.close());
it('probe', async () => {
  const a = await server.tenant('ha'); const b = await server.tenant('hb');
  const A = a.schema;
  const out: string[] = [];
  const cases: unknown[] = [
      [[`${A}.tabToDo`, 'name', 'is', 'set']],
      [[`${A}"."tabToDo`, 'description', 'like', '%']],
      [[`../${A}/ToDo`, 'name', 'is', 'set']],
      { [`${A}."tabToDo".description`]: 'x' },
      { [`${A}.tabToDo.name`]: 'y' },
      [[`\`${A}\`.\`tabToDo\`.\`name\``, '=', 'z']],
      [['description', 'like', '%', `${A}`]],
  ];
  for (const filters of cases) {
    const r = await b.call('GET', '/api/resource/ToDo', { query: { filters: JSON.stringify(filters) } });
    const c = await b.call('GET', '/api/method/frappe.client.get_count', { query: { doctype: 'ToDo', filters: JSON.stringify(filters) } });
    out.push(`F ${JSON.stringify(filters)} ${r.status} ${r.body?.exc_type} ${c.status} ${c.body?.exc_type}`);
  }
  const fields = [[`${A}."tabToDo".description`],[`${A}.tabToDo.description`],[`\`${A}\`.\`tabToDo\`.\`description\``],[`"${A}"."tabToDo"."description"`],[`\`${A}.tabToDo\`.\`description\``],[`(select description from ${A}."tabToDo" limit 1) as x`],[`name; select * from ${A}."tabToDo"`],[`name from ${A}."tabToDo" --`],['name /* comment */'],[`\`tab${A}"."tabToDo\`.\`description\``]];
  for (const f of fields) { const r = await b.call('GET', '/api/resource/ToDo', { query: { fields: JSON.stringify(f) } }); out.push(`FI ${f[0]} ${r.status} ${r.body?.exc_type}`); }
  for (const o of [`${A}."tabToDo".name desc`,`${A}.tabToDo.name`,`\`${A}\`.\`tabToDo\`.\`name\` asc`,`name; select * from ${A}."tabToDo"`,`(select max(description) from ${A}."tabToDo")`,`name desc, (select 1)`,`name desc -- `]) { const r = await b.call('GET', '/api/resource/ToDo', { query: { order_by: o } }); out.push(`O ${o} ${r.status} ${r.body?.exc_type}`); }
  for (const g of [`${A}."tabToDo".name`, `name; select * from ${A}."tabToDo"`]) { const r = await b.call('GET', '/api/resource/ToDo', { query: { group_by: g, fields: '["name"]' } }); out.push(`G ${g} ${r.status} ${r.body?.exc_type}`); }
  process.stdout.write(out.join('\n') + '\n');
});
