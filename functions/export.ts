// GET /api/{username}/{projectSlug}/export[?cursor=<the cursor of the previous page>]
import { contentExport } from '../lib/http/export-handler';

export const handler = contentExport();
