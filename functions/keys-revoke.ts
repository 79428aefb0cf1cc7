// DELETE /api/{username}/{projectSlug}/keys/{id}: revokes an API key at once (401 from then on). Owner only.
import { accountError, answerAfterStamping, managementRoute } from '../lib/http/management-handlers';
import { Refusal } from '../lib/config/errors';
import { revokeApiKey } from '../lib/store/accounts';

const keyNotFound = () => new Refusal('KEY_NOT_FOUND', 'no such API key in this project');

export const handler = managementRoute({
  rule: 'owner',
  run: async ({ project, event }) => {
    const id = event.pathParameters?.id ?? '';
    const stamping = await revokeApiKey(project, id).catch((error: unknown) => accountError(error, keyNotFound));
    return answerAfterStamping({ message: 'API key revoked successfully' }, stamping);
  },
});
