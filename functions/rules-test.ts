// POST /api/{username}/{projectSlug}/rules/test: the rules tester, evaluated by the very decision content requests
// use, on the stored rules or the ones given (nothing is stored). Owner only.
import { managementRoute } from '../lib/http/management-handlers';
import { testedCaller, testedPath } from '../lib/http/rules-handlers';
import { validateTestRules as validate } from '../lib/http/validators.generated';
import { explainAccess } from '../lib/rules/access';
import { compiledRules } from '../lib/rules/cache';
import { schemaViolation, writeUsesData } from '../lib/rules/decision';
import { NotFound } from '../lib/config/errors';
import type { Segments } from '../lib/paths';
import { readContent } from '../lib/storage';

/** The value at `path` now (read as the owner, who runs the tester), undefined when there is none. */
async function currentValue(project: ProjectRef, path: Segments): Promise<unknown> {
  const owner = { kind: 'user' as const, username: project.username };
  try {
    return (await readContent({ project, principal: owner, segments: path.length ? path : undefined })).value;
  } catch (error) {
    if (error instanceof NotFound && error.code === 'PATH_NOT_FOUND') return undefined;
    throw error;
  }
}
import { compileRules } from '../lib/rules/document';
import { loadEngines } from '../lib/rules/load';
import { type ProjectRef, projectName } from '../lib/schema/items';
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
    // `data` as a real write would see it: the value at the path now (read only when a condition reads it).
    const data = operation === 'write' && writeUsesData(rules, path) ? await currentValue(project, path) : undefined;
    const verdict = explainAccess(rules, {
      operation,
      paths: [path],
      auth,
      standing,
      now: Date.now(),
      data,
      newData: body.value,
    });
    if (verdict.allowed && operation === 'write' && body.value !== undefined) {
      const violation = schemaViolation(rules, path, path, body.value);
      if (violation !== undefined)
        return {
          statusCode: 200,
          body: { allowed: false, rule: verdict.rule, reason: `VALIDATION_FAILED: ${violation}` },
        };
    }
    return { statusCode: 200, body: verdict };
  },
});
