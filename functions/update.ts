// POST /api/{username}/{projectSlug}/content/update
import { contentMutation } from '../lib/http/content-handlers';
import { SUCCESS_MESSAGES, operations } from '../lib/content/operations';
import { validateUpdate as validate } from '../lib/http/validators.generated';

export const handler = contentMutation({
  validate,
  operation: operations.update,
  message: SUCCESS_MESSAGES.update,
});
