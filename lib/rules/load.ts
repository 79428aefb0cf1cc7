// Loading the rules' engines (./engines, a lazy module): once per container, on the first request that needs them.
export type Engines = typeof import('./engines');

let loading: Promise<Engines> | undefined;

/** The CEL and JSON Schema engines, imported on first use. */
export function loadEngines(): Promise<Engines> {
  loading ??= import('./engines').catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}
