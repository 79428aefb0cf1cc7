// POST /api/{username}/{projectSlug}/content/decrement
import { contentMutation } from '../lib/http/content-handlers';
import { SUCCESS_MESSAGES, operations } from '../lib/content/operations';
import { validateDecrement as validate } from '../lib/http/validators.generated';

export const handler = contentMutation({
  validate,
  operation: operations.decrement,
  message: SUCCESS_MESSAGES.decrement,
});
