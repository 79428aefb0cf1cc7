// DELETE /api/{username}/{projectSlug}: deletes content, keys and memberships; owner only.
import { accountError, managementRoute } from '../lib/http/management-handlers';
import { projectNotFound } from '../lib/auth/access';
import { deleteProject } from '../lib/store/grants';

export const handler = managementRoute({
  rule: 'owner',
  run: async ({ project }) => {
    await deleteProject(project).catch((error: unknown) => accountError(error, () => projectNotFound(project)));
    return { statusCode: 200, body: { message: 'Project deleted successfully' } };
  },
});
