// The local stack's seed step, run as its own process so the load generator never loads the
// platform: brings the fresh database to this build's release (what `quire migrate` runs:
// migrateRelease through createRuntime) and creates the tenants, printing one line per tenant in
// the shape of `quire tenant create --json` (the tenants file the scripts read).
//   node --import tsx load-tests/node/stack/seed.ts <count> <prefix>
import { createRuntime, loadRuntimeConfig } from '@quire/runtime';
import { createTenant } from '@quire/tenancy';

const count = Number(process.argv[2] ?? 8);
const prefix = process.argv[3] ?? 'load';
const rt = await createRuntime({ config: loadRuntimeConfig(), name: 'quire-load-seed', migrate: 'release' });
try {
  const names = Array.from({ length: count }, (_, i) => `${prefix}${String(i + 1).padStart(2, '0')}`);
  // Four at a time: a tenant install is mostly Postgres work.
  for (let i = 0; i < names.length; i += 4) {
    const created = await Promise.all(names.slice(i, i + 4).map((name) => createTenant(rt.platform, { name })));
    for (const t of created)
      process.stdout.write(`${JSON.stringify({ name: t.name, schema: t.schema, hosts: t.hosts, api_key: t.api_key, api_secret: t.api_secret })}\n`);
  }
} finally {
  await rt.close();
}
