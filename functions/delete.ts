// POST /api/{username}/{projectSlug}/content/delete
import { contentMutation } from '../lib/http/content-handlers';
import { SUCCESS_MESSAGES, operations } from '../lib/content/operations';
import { validateDelete as validate } from '../lib/http/validators.generated';

export const handler = contentMutation({
  validate,
  operation: operations.delete,
  message: SUCCESS_MESSAGES.delete,
});
