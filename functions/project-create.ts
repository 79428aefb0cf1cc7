// POST /api/{username}/{projectSlug}: creates a project owned by the caller, who must be {username}.
import { managementRoute } from '../lib/http/management-handlers';
import { AccountError, createProject, ensureUser } from '../lib/store/accounts';
import { Refusal } from '../lib/config/errors';
import { validateCreateProject as validate } from '../lib/http/validators.generated';

export const handler = managementRoute({
  rule: 'creator',
  validate,
  run: async ({ project }) => {
    await ensureUser(project.username);
    try {
      const { createdAt } = await createProject(project);
      return { statusCode: 201, body: { username: project.username, projectSlug: project.slug, createdAt } };
    } catch (error) {
      if (error instanceof AccountError && error.code === 'EXISTS') throw new Refusal('PROJECT_EXISTS', error.message);
      throw error;
    }
  },
});
