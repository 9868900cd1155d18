import { inject } from 'vitest';

/**
 * How a Quire process in the suite reaches the database: with QUIRE_TEST_POOLER=pgbouncer an `env`
 * naming the suite's database directly is taken through PgBouncer in transaction mode instead (a
 * test that points a process elsewhere, e.g. through its own proxy, keeps its URL).
 */
export function throughPooler(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const pooler = inject('poolerEnv');
  if (!pooler.DATABASE_URL || env.DATABASE_URL !== inject('databaseUrl')) return env;
  return { ...env, ...pooler };
}
