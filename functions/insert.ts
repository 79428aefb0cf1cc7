// POST /api/{username}/{projectSlug}/content/insert
import { contentMutation } from '../lib/http/content-handlers';
import { operations } from '../lib/content/operations';
import { validateInsert as validate } from '../lib/http/validators.generated';

export const handler = contentMutation({
  validate,
  operation: operations.insert,
  message: 'Value inserted successfully',
});
