// POST /api/{username}/{projectSlug}/content/push
import { contentMutation } from '../lib/http/content-handlers';
import { operations } from '../lib/content/operations';
import { validatePush as validate } from '../lib/http/validators.generated';

export const handler = contentMutation({
  validate,
  operation: operations.push,
  message: 'Object pushed successfully',
});
