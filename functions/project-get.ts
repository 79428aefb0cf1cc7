// GET /api/{username}/{projectSlug}: the project, with the caller's role; any member.
import { managementRoute, roleOf } from '../lib/http/management-handlers';

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
      version: item!.version,
    },
  }),
});
