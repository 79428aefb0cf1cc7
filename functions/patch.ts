// PATCH /api/{username}/{projectSlug}/content (application/json-patch+json or application/merge-patch+json)
import { SUCCESS_MESSAGES } from '../lib/content/operations';
import { contentPatch } from '../lib/http/content-handlers';

export const handler = contentPatch(SUCCESS_MESSAGES.patch);
