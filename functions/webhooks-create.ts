// POST /api/{username}/{projectSlug}/webhooks: a new webhook; its signing secret is shown only in this response. Owner only.
import { accountError, managementRoute } from '../lib/http/management-handlers';
import { projectNotFound } from '../lib/auth/access';
import { webhookPath } from '../lib/webhooks/changes';
import { checkWebhookUrl } from '../lib/webhooks/destination';
import { createWebhook } from '../lib/store/webhooks';
import { validateCreateWebhook as validate } from '../lib/http/validators.generated';

export const handler = managementRoute({
  rule: 'owner',
  validate,
  run: async ({ project, item, body }) => {
    const path = body.path === undefined ? null : webhookPath(body.path);
    const url = (await checkWebhookUrl(body.url)).href;
    const created = await createWebhook(project, item!.inc, { url, path }).catch((error: unknown) =>
      accountError(error, () => projectNotFound(project)),
    );
    const { id, secret, createdAt } = created;
    return { statusCode: 201, body: { id, url, path, secret, createdAt } };
  },
});
