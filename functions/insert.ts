// POST /api/{username}/{projectSlug}/content/insert
import { contentMutation } from '../lib/http/content-handlers';
import { SUCCESS_MESSAGES, operations } from '../lib/content/operations';
import { validateInsert as validate } from '../lib/http/validators.generated';

export const handler = contentMutation({
  validate,
  operation: operations.insert,
  message: SUCCESS_MESSAGES.insert,
});
