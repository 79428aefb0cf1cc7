declare module 'dynalite' {
  import type { Server } from 'node:http';
  function dynalite(options?: Record<string, unknown>): Server;
  export default dynalite;
}
declare module 'dynalite/db' {
  const db: { checkConditional: (data: Record<string, unknown>, existing: unknown) => (Error & { body?: Record<string, unknown> }) | null | undefined };
  export default db;
}
