// POST /api/{username}/{projectSlug}/content/increment
import { contentMutation } from '../lib/http/content-handlers';
import { SUCCESS_MESSAGES, operations } from '../lib/content/operations';
import { validateIncrement as validate } from '../lib/http/validators.generated';

export const handler = contentMutation({
  validate,
  operation: operations.increment,
  message: SUCCESS_MESSAGES.increment,
});
