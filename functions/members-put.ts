// PUT /api/{username}/{projectSlug}/members/{member}: adds a member or changes their role. Owner only.
import type { Role } from '../lib/schema/items';
import { USERNAME, canonicalName } from '../lib/schema/items';
import { accountError, answerAfterStamping, managementRoute } from '../lib/http/management-handlers';
import { projectNotFound } from '../lib/auth/access';
import { Refusal } from '../lib/config/errors';
import { setMember, userExists } from '../lib/store/accounts';
import { validatePutMember as validate } from '../lib/http/validators.generated';

export const handler = managementRoute({
  rule: 'owner',
  validate,
  run: async ({ project, event, body }) => {
    const member = canonicalName(event.pathParameters?.member ?? '');
    if (!USERNAME.test(member) || !(await userExists(member)))
      throw new Refusal('USER_NOT_FOUND', `user ${member} does not exist`);
    if (member === project.username) throw new Refusal('INVALID_MEMBER', 'the owner cannot also be a member');
    const role = body.role as Role;
    const stamping = await setMember(project, member, role).catch((error: unknown) =>
      accountError(error, () => projectNotFound(project)),
    );
    return answerAfterStamping({ member, role }, stamping);
  },
});
