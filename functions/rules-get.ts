// GET /api/{username}/{projectSlug}/rules: the project's access rules and their version. Any member.
import { managementRoute } from '../lib/http/management-handlers';
import { readRules } from '../lib/store/rules';

export const handler = managementRoute({
  rule: 'member',
  run: async ({ project, item }) => {
    const { document, version } = await readRules(project, item!.inc);
    return { statusCode: 200, body: { ...document, version }, headers: { ETag: `"${version}"` } };
  },
});
