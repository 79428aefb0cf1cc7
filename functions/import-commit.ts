// POST /api/{username}/{projectSlug}/import/{session}/commit
import { importCommit } from '../lib/http/import-handlers';

export const handler = importCommit();
