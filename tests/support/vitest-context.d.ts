/** What the suite's global setup provides to every test file (`inject('databaseUrl')`). */
declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}
export {};
