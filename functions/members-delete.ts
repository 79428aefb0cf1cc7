// DELETE /api/{username}/{projectSlug}/members/{member}: removes a member. Owner only.
import { accountError, answerAfterStamping, managementRoute } from '../lib/http/management-handlers';
import { Refusal } from '../lib/config/errors';
import { removeMember } from '../lib/store/accounts';
import { canonicalName } from '../lib/schema/items';

export const handler = managementRoute({
  rule: 'owner',
  run: async ({ project, event }) => {
    const member = canonicalName(event.pathParameters?.member ?? '');
    const stamping = await removeMember(project, member).catch((error: unknown) =>
      accountError(error, () => new Refusal('MEMBER_NOT_FOUND', `${member} is not a member of this project`)),
    );
    return answerAfterStamping({ message: 'Member removed successfully' }, stamping);
  },
});
