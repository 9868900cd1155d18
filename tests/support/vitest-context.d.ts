/** What the suite's global setup provides to every test file (`inject('databaseUrl')`). */
declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    /** With QUIRE_TEST_POOLER=pgbouncer: the settings that take Quire through PgBouncer in transaction mode. */
    poolerEnv: Record<string, string>;
  }
}
export {};
