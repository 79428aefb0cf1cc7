// POST /api/{username}/{projectSlug}/content/set
import { contentMutation } from '../lib/http/content-handlers';
import { SUCCESS_MESSAGES, operations } from '../lib/content/operations';
import { validateSet as validate } from '../lib/http/validators.generated';

export const handler = contentMutation({
  validate,
  operation: operations.set,
  message: SUCCESS_MESSAGES.set,
});
