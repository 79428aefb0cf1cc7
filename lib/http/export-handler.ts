// GET export (docs/design/backup.md §2): the whole content in pages of pieces at one revision.
import { exportPageBytes } from '../config/env';
import { EXPORT_PAGE_READS } from '../config/limits';
import { exportPage } from '../history/export';
import { exportBudgets } from '../history/export-plan';
import { assertProjectAccess } from '../storage';
import { httpHandler } from './edge';
import { beginRequest } from './route-context';

/** GET export?cursor=: a page of the export (read access to the whole content, as a GET of the root needs). */
export function contentExport() {
  return httpHandler(async (event) => {
    const { principal: caller, project } = await beginRequest(event, 'read');
    // As a read of the root: a key limited to a path, or rules that grant less than the root, are a 403.
    const principal = { ...caller, scope: { touches: [{ operation: 'read' as const, path: [] }] } };
    const inc = await assertProjectAccess(project, principal, 'read');
    const page = await exportPage({
      project,
      principal,
      inc,
      cursor: event.queryStringParameters?.cursor,
      budgets: exportBudgets(exportPageBytes()),
      maxReads: EXPORT_PAGE_READS,
    });
    return { statusCode: 200, body: page };
  });
}
