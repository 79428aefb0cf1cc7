// GET /api/{username}/{projectSlug}: the project, with the caller's role; any member.
import { managementRoute } from '../lib/http/management-handlers';

export const handler = managementRoute({
  rule: 'member',
  run: async ({ project, item }) => ({
    statusCode: 200,
    body: {
      username: project.username,
      projectSlug: project.slug,
      owner: item!.owner,
      role: item!.role,
      createdAt: item!.createdAt,
    },
  }),
});
