// Types of infra/iam-actions.mjs for the TypeScript that imports it (test/package/template.test.ts).
export declare const STREAM_ACTIONS: string[];
export declare const CONNECTION_ACTIONS: string[];
