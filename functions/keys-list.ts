// GET /api/{username}/{projectSlug}/keys: the project's API keys, without secrets. Owner only.
import { isoTime, managementRoute } from '../lib/http/management-handlers';

export const handler = managementRoute({
  rule: 'owner',
  run: async ({ item }) => {
    const keys = Object.entries(item!.keys)
      .map(([id, key]) => ({ id, name: key.name ?? '', permissions: key.permissions, createdAt: key.createdAt ?? null, expiresAt: isoTime(key.expiresAt) }))
      .sort((a, b) => String(a.createdAt).localeCompare(String(b.createdAt)) || a.id.localeCompare(b.id));
    return { statusCode: 200, body: { keys } };
  },
});
