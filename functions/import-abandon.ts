// DELETE /api/{username}/{projectSlug}/import/{session}
import { importAbandon } from '../lib/http/import-handlers';

export const handler = importAbandon();
