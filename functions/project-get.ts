// GET /api/{username}/{projectSlug}: the project, with the caller's role; any member.
import { managementRoute } from '../lib/http/management-handlers';
import { roleOf } from '../lib/policy';

export const handler = managementRoute({
  rule: 'member',
  run: async ({ project, item, username }) => ({
    statusCode: 200,
    body: {
      username: project.username,
      projectSlug: project.slug,
      owner: item!.owner,
      role: roleOf(item!, username),
      createdAt: item!.createdAt,
    },
  }),
});
