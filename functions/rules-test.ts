// POST /api/{username}/{projectSlug}/rules/test: the rules tester, evaluated by the very decision content requests
// use, on the stored rules or the ones given (nothing is stored). Owner only.
import type { ContentOperation } from '../lib/content/model';
import { managementRoute } from '../lib/http/management-handlers';
import { testedCaller, testedPath } from '../lib/http/rules-handlers';
import { currentValue, judgeWrite } from '../lib/http/schema-guard';
import { validateTestRules as validate } from '../lib/http/validators.generated';
import { explainAccess } from '../lib/rules/access';
import { compiledRules } from '../lib/rules/cache';
import { writeUsesData } from '../lib/rules/decision';
import { compileRules } from '../lib/rules/document';
import { loadEngines } from '../lib/rules/load';
import { requestTouches } from '../lib/rules/touches';
import type { Json } from '../lib/content/json';
import { projectName } from '../lib/schema/items';
import { readRules } from '../lib/store/rules';

export const handler = managementRoute({
  rule: 'owner',
  validate,
  run: async ({ project, item, body }) => {
    const inc = item!.inc;
    const rules =
      body.rules === undefined
        ? await compiledRules(projectName(project), inc, await readRules(project, inc))
        : compileRules(await loadEngines(), {
            rules: body.rules,
            ...(body.allowPublicWrite === undefined ? {} : { allowPublicWrite: body.allowPublicWrite }),
          });
    const path = testedPath(String(body.path));
    const operation = body.operation as 'read' | 'write';
    const { auth, standing } = await testedCaller(project, body.auth);
    const question = { operation, paths: [path], auth, standing, now: Date.now() };
    if (operation === 'write' && body.value !== undefined) {
      // A `set` of the value at the path, judged exactly as the write itself is (lib/http/schema-guard.ts): the same
      // `data`/`newData`, the same schemas on the path, its ancestors and descendants, on the content as it is now.
      const op: ContentOperation = { kind: 'set', segments: path, value: body.value as Json };
      const judged = await judgeWrite(project, { schemas: rules, access: rules }, op, requestTouches(op));
      const [touch] = judged.touches;
      const verdict = explainAccess(rules, { ...question, data: touch?.data, newData: touch?.newData });
      if (verdict.allowed && judged.kind === 'computed' && judged.violation !== undefined) {
        return {
          statusCode: 200,
          body: { allowed: false, rule: verdict.rule, reason: `VALIDATION_FAILED: ${judged.violation}` },
        };
      }
      return { statusCode: 200, body: verdict };
    }
    // Without a value: `data` as a real write would see it (read only when a condition reads it), no `newData`.
    const data = operation === 'write' && writeUsesData(rules, path) ? await currentValue(project, path) : undefined;
    return { statusCode: 200, body: explainAccess(rules, { ...question, data }) };
  },
});
