declare module 'dynalite' {
  import type { Server } from 'node:http';
  function dynalite(options?: Record<string, unknown>): Server;
  export default dynalite;
}
declare module 'dynalite/db' {
  type Item = Record<string, unknown> | null | undefined;
  const db: {
    checkConditional: (data: Record<string, unknown>, existing: unknown) => (Error & { body?: Record<string, unknown> }) | null | undefined;
    updateIndexes: (store: unknown, table: unknown, existing: Item, item: Item, cb: (error?: Error | null) => void) => void;
    validationError: (message: string) => Error;
  };
  export default db;
}
