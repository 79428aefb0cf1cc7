// POST /api/{username}/{projectSlug}/import/{session}
import { importPage } from '../lib/http/import-handlers';
import { validateImportPage as validate } from '../lib/http/validators.generated';

export const handler = importPage(validate);
