// Types of infra/observability.mjs for the TypeScript that imports it (test/package/template.test.ts).
export declare const ALARMS: { perFunction: Record<string, string>; stage: Record<string, string> };
export declare function observabilityResources(options: {
  service: string;
  stage: string;
  functions: Array<{ name: string; logicalId: string; lambdaName: string }>;
  /** The stage's `alarms` param: alarms and their topic only when true (or "true"). */
  alarms: boolean | string;
  thresholds: Record<string, number | string>;
  alarmEmail: string;
  api: string;
  table: string;
}): { Resources: Record<string, unknown>; Conditions: Record<string, unknown> };
