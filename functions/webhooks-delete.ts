// DELETE /api/{username}/{projectSlug}/webhooks/{id}: removes a webhook; nothing more is delivered to it. Owner only.
import { accountError, managementRoute } from '../lib/http/management-handlers';
import { Refusal } from '../lib/config/errors';
import { deleteWebhook } from '../lib/store/webhooks';

const webhookNotFound = () => new Refusal('WEBHOOK_NOT_FOUND', 'no such webhook in this project');

export const handler = managementRoute({
  rule: 'owner',
  run: async ({ project, item, event }) => {
    const id = event.pathParameters?.id ?? '';
    await deleteWebhook(project, item!.inc, id).catch((error: unknown) => accountError(error, webhookNotFound));
    return { statusCode: 204, body: undefined };
  },
});
