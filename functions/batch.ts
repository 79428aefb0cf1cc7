// POST /api/{username}/{projectSlug}/content/batch
import { contentMutation } from '../lib/http/content-handlers';
import { SUCCESS_MESSAGES } from '../lib/content/operations';
import { batchOperations, batchRefusal, batchView } from '../lib/http/batch';
import { validateBatch as validate } from '../lib/http/validators.generated';

export const handler = contentMutation({
  validate,
  view: batchView,
  refuse: batchRefusal,
  operation: batchOperations,
  message: SUCCESS_MESSAGES.batch,
});
