// GET /api/{username}/{projectSlug}/members: the owner and the members with their roles. Owner only.
import { managementRoute } from '../lib/http/management-handlers';
import { listMembers } from '../lib/store/grants';

export const handler = managementRoute({
  rule: 'owner',
  run: async ({ project, item }) => {
    const members = (await listMembers(project, item!.inc)).sort((a, b) => a.username.localeCompare(b.username));
    return { statusCode: 200, body: { owner: item!.owner, members } };
  },
});
