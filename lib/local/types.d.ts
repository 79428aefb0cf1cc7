declare module 'dynalite' {
  import type { Server } from 'node:http';
  function dynalite(options?: Record<string, unknown>): Server;
  export default dynalite;
}
declare module 'dynalite/db' {
  type Item = Record<string, unknown> | null | undefined;
  const db: {
    checkConditional: (
      data: Record<string, unknown>,
      existing: unknown,
    ) => (Error & { body?: Record<string, unknown> }) | null | undefined;
    updateIndexes: (
      store: unknown,
      table: unknown,
      existing: Item,
      item: Item,
      cb: (error?: Error | null) => void,
    ) => void;
    validationError: (message: string) => Error;
    itemSize: (item: Record<string, unknown>) => number;
    compare: (comparison: string, value: unknown, compared: unknown[]) => boolean;
    mapPath: (path: Array<string | number>, item: Record<string, any>) => unknown;
    mapPaths: (paths: Array<string | Array<string | number>>, item: Record<string, any>) => Record<string, unknown>;
  };
  export default db;
}
declare module 'dynalite/validations/putItem' {
  const validation: {
    types: Record<string, unknown>;
    custom?: (data: Record<string, unknown>, store: unknown) => unknown;
  };
  export default validation;
}
declare module 'dynalite/validations/updateItem' {
  const validation: {
    types: Record<string, unknown>;
    custom?: (data: Record<string, unknown>, store: unknown) => unknown;
  };
  export default validation;
}
declare module 'dynalite/validations/deleteItem' {
  const validation: {
    types: Record<string, unknown>;
    custom?: (data: Record<string, unknown>, store: unknown) => unknown;
  };
  export default validation;
}
declare module 'dynalite/validations' {
  const validations: {
    checkTypes: (data: Record<string, unknown>, types: Record<string, unknown>) => Record<string, unknown>;
    checkValidations: (
      data: Record<string, unknown>,
      types: Record<string, unknown>,
      custom: ((data: Record<string, unknown>, store: unknown) => unknown) | undefined,
      store: unknown,
    ) => void;
  };
  export default validations;
}
