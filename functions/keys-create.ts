// POST /api/{username}/{projectSlug}/keys: a new API key; its secret is shown only in this response. Owner only.
import type { Permission } from '../lib/schema/attributes';
import { accountError, isoTime, managementRoute } from '../lib/http/management-handlers';
import { projectNotFound } from '../lib/auth/access';
import { createApiKey } from '../lib/store/accounts';
import { validateCreateKey as validate } from '../lib/http/validators.generated';
import { formatPath, parsePath } from '../lib/paths';

export const handler = managementRoute({
  rule: 'owner',
  validate,
  run: async ({ project, body }) => {
    const created = await createApiKey(project, {
      name: body.name as string,
      permissions: [...new Set(body.permissions as Permission[])],
      expiresInSeconds: body.expiresInSeconds as number | undefined,
      // Each path as the API shows paths (a bad one is its 400); a scoped key reads and writes only at and below them.
      paths: Array.isArray(body.paths) ? [...new Set(body.paths.map((p) => formatPath(parsePath(p))))] : undefined,
    }).catch((error: unknown) => accountError(error, () => projectNotFound(project)));
    return { statusCode: 201, body: { ...created, expiresAt: isoTime(created.expiresAt) } };
  },
});
