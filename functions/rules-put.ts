// PUT /api/{username}/{projectSlug}/rules: replaces the project's access rules (If-Match on the version). Owner only.
import { projectNotFound } from '../lib/auth/access';
import { PreconditionFailed } from '../lib/config/errors';
import { answerAfterStamping, managementRoute } from '../lib/http/management-handlers';
import { rulesIfMatch } from '../lib/http/rules-handlers';
import { validatePutRules as validate } from '../lib/http/validators.generated';
import { compileRules } from '../lib/rules/document';
import { loadEngines } from '../lib/rules/load';
import { readProjectMeta } from '../lib/store/accounts';
import { RulesChanged, putRules, readRules } from '../lib/store/rules';

export const handler = managementRoute({
  rule: 'owner',
  validate,
  run: async ({ project, item, event, body }) => {
    const ifMatch = rulesIfMatch(event);
    const { source, warnings, rules } = compileRules(await loadEngines(), body);
    const schemas = rules.filter((rule) => rule.validate !== undefined).length;
    const inc = item!.inc;
    const expected = ifMatch ?? (await readRules(project, inc)).version;
    try {
      const { version, stamping } = await putRules(project, inc, source, expected, schemas);
      return answerAfterStamping({ version, warnings }, stamping, { ETag: `"${version}"` });
    } catch (error) {
      if (!(error instanceof RulesChanged)) throw error;
      if ((await readProjectMeta(project))?.inc !== inc) throw projectNotFound(project);
      const current = (await readRules(project, inc)).version;
      throw new PreconditionFailed(`"${current}"`);
    }
  },
});
