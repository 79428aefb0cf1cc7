// GET /api/{username}/{projectSlug}/members: the owner and the members with their roles. Owner only.
import { managementRoute } from '../lib/http/management-handlers';

export const handler = managementRoute({
  rule: 'owner',
  run: async ({ item }) => {
    const members = Object.entries(item!.members)
      .map(([username, role]) => ({ username, role }))
      .sort((a, b) => a.username.localeCompare(b.username));
    return { statusCode: 200, body: { owner: item!.owner, members } };
  },
});
