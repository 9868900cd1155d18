// k6 has a console (its logger) that @types/k6 does not declare; the scripts use only these.
declare global {
  const console: {
    log(...args: unknown[]): void;
    warn(...args: unknown[]): void;
    error(...args: unknown[]): void;
  };
}

export {};
