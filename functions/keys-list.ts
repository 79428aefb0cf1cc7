// GET /api/{username}/{projectSlug}/keys: the project's API keys, without secrets. Owner only.
import { listedKey, managementRoute } from '../lib/http/management-handlers';
import { listKeys } from '../lib/store/grants';

export const handler = managementRoute({
  rule: 'owner',
  run: async ({ project, item }) => {
    const keys = (await listKeys(project, item!.inc))
      .map(({ id, entry }) => listedKey(id, entry))
      .sort((a, b) => String(a.createdAt).localeCompare(String(b.createdAt)) || a.id.localeCompare(b.id));
    return { statusCode: 200, body: { keys } };
  },
});
