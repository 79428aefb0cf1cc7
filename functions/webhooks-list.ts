// GET /api/{username}/{projectSlug}/webhooks: the project's webhooks, without secrets. Owner only.
import { managementRoute } from '../lib/http/management-handlers';
import { listWebhooks } from '../lib/store/webhooks';

export const handler = managementRoute({
  rule: 'owner',
  run: async ({ project, item }) => {
    const webhooks = (await listWebhooks(project, item!.inc)).map(
      ({ id, url, path, createdAt, dropped, lastDropped }) => ({ id, url, path, createdAt, dropped, lastDropped }),
    );
    return { statusCode: 200, body: { webhooks } };
  },
});
