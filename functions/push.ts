// POST /api/{username}/{projectSlug}/content/push
import { contentMutation } from '../lib/http/content-handlers';
import { SUCCESS_MESSAGES, operations } from '../lib/content/operations';
import { validatePush as validate } from '../lib/http/validators.generated';

export const handler = contentMutation({
  validate,
  operation: operations.push,
  message: SUCCESS_MESSAGES.push,
});
