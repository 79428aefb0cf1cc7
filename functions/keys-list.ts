// GET /api/{username}/{projectSlug}/keys: the project's API keys, without secrets. Owner only.
import { isoTime, managementRoute } from '../lib/http/management-handlers';

export const handler = managementRoute({
  rule: 'owner',
  run: async ({ item }) => {
    const keys = Object.entries(item!.keys)
      .map(([id, key]) => ({ id, name: key.n ?? '', permissions: key.p, createdAt: key.c ?? null, expiresAt: isoTime(key.e) }))
      .sort((a, b) => String(a.createdAt).localeCompare(String(b.createdAt)) || a.id.localeCompare(b.id));
    return { statusCode: 200, body: { keys } };
  },
});
