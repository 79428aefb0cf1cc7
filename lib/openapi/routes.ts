// Route table for the API docs: one entry per route in serverless.yml, in the order the reference lists them.
import { CONTENT_ROUTES } from './content-routes';
import { EXPORT_ROUTES } from './export-routes';
import { HISTORY_ROUTES } from './history-routes';
import { IMPORT_ROUTES } from './import-routes';
import { MANAGEMENT_ROUTES } from './management-routes';
import type { RouteDoc } from './route-doc';

export { PATH_PARAMETERS, type RouteDoc, TAGS } from './route-doc';

export const ROUTES: readonly RouteDoc[] = [
  ...CONTENT_ROUTES,
  ...HISTORY_ROUTES,
  ...EXPORT_ROUTES,
  ...IMPORT_ROUTES,
  ...MANAGEMENT_ROUTES,
];
