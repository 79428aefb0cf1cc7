// POST /api/{username}/{projectSlug}/import
import { importStart } from '../lib/http/import-handlers';

export const handler = importStart();
