// POST /api/{username}/{projectSlug}/content/batch
import { contentMutation } from '../lib/http/content-handlers';
import { SUCCESS_MESSAGES } from '../lib/content/operations';
import { batchOperations } from '../lib/http/batch';
import { validateBatchEnvelope as validate } from '../lib/http/validators.generated';

export const handler = contentMutation({
  validate,
  operation: batchOperations,
  message: SUCCESS_MESSAGES.batch,
});
