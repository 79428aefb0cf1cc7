// GET /api/{username}/{projectSlug}/content/history[?path=a.b][&limit=n][&before=<revision>]
import { historyRead } from '../lib/http/history-handlers';
import { validateHistoryQuery as validate } from '../lib/http/validators.generated';

export const handler = historyRead(validate);
